import { Injectable } from '@nestjs/common';
import { DueRow, LostJobSource, stagedJob, SweepSource } from '@app/jobs';
import { FanOutEventJob } from './event.jobs';
import { eventQueries } from './events.queries';

/** Events not yet fanned out one sweep interval after they were recorded. */
@Injectable()
@LostJobSource()
export class EventsSweepSource implements SweepSource {
  readonly name = 'events';
  readonly dueSql = eventQueries.sweepDue().text;

  job(row: DueRow) {
    return stagedJob(
      FanOutEventJob,
      { accountId: row.accountId, eventId: Number(row.id) },
      { traceparent: row.traceparent },
    );
  }
}
