import { Injectable } from '@nestjs/common';
import { DueRow, LostJobSource, stagedJob, SweepSource } from '@app/jobs';
import { ProcessMessageJob } from './message.jobs';
import { messageQueries } from './messages.queries';

/** Messages still queued or processing one sweep interval after they were accepted. */
@Injectable()
@LostJobSource()
export class MessagesSweepSource implements SweepSource {
  readonly name = 'messages';
  readonly dueSql = messageQueries.sweepDue().text;

  job(row: DueRow) {
    return stagedJob(
      ProcessMessageJob,
      { accountId: row.accountId, messageId: String(row.id) },
      { traceparent: row.traceparent },
    );
  }
}
