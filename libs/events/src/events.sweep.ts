import { Injectable } from '@nestjs/common';
import { DueRow, LostJobSource, stagedJob, SweepSource } from '@app/jobs';
import { FanOutEventJob } from './event.jobs';

/** Events not yet fanned out one sweep interval after they were recorded. */
@Injectable()
@LostJobSource()
export class EventsSweepSource implements SweepSource {
  readonly name = 'events';
  readonly dueSql = `SELECT id, account_id AS "accountId", traceparent, created_at::text AS "dueAt" FROM events
       WHERE NOT fanned_out
         AND created_at < now() - make_interval(secs => $1::double precision / 1000)
         AND (created_at, id) > (coalesce($3::timestamptz, '-infinity'), coalesce($4::bigint, 0))
       ORDER BY created_at, id LIMIT $2
       FOR UPDATE SKIP LOCKED`;

  job(row: DueRow) {
    return stagedJob(
      FanOutEventJob,
      { accountId: row.accountId, eventId: Number(row.id) },
      { traceparent: row.traceparent },
    );
  }
}
