import { Injectable } from '@nestjs/common';
import { DueRow, LostJobSource, stagedJob, SweepSource } from '@app/jobs';
import { ProcessMessageJob } from './message.jobs';

/** Messages still queued or processing one sweep interval after they were accepted. */
@Injectable()
@LostJobSource()
export class MessagesSweepSource implements SweepSource {
  readonly name = 'messages';
  readonly dueSql = `SELECT id, account_id AS "accountId", traceparent, created_at::text AS "dueAt" FROM messages
       WHERE status IN ('queued', 'processing')
         AND created_at < now() - make_interval(secs => $1::double precision / 1000)
         AND (created_at, id) > (coalesce($3::timestamptz, '-infinity'), coalesce($4::text, ''))
       ORDER BY created_at, id LIMIT $2
       FOR UPDATE SKIP LOCKED`;

  job(row: DueRow) {
    return stagedJob(
      ProcessMessageJob,
      { accountId: row.accountId, messageId: String(row.id) },
      { traceparent: row.traceparent },
    );
  }
}
