import { Injectable } from '@nestjs/common';
import { DueRow, LostJobSource, stagedJob, SweepSource } from '@app/jobs';
import { FulfilOrderJob } from './store.jobs';

/** Open orders one sweep interval past their ship date (or their placing, without one). */
@Injectable()
@LostJobSource()
export class OrdersSweepSource implements SweepSource {
  readonly name = 'orders';
  readonly dueSql = `SELECT id, account_id AS "accountId", traceparent, coalesce(ship_date, created_at)::text AS "dueAt"
       FROM orders
       WHERE NOT complete
         AND coalesce(ship_date, created_at) < now() - make_interval(secs => $1::double precision / 1000)
         AND (coalesce(ship_date, created_at), id) > (coalesce($3::timestamptz, '-infinity'), coalesce($4::bigint, 0))
       ORDER BY coalesce(ship_date, created_at), id LIMIT $2
       FOR UPDATE SKIP LOCKED`;

  job(row: DueRow) {
    return stagedJob(
      FulfilOrderJob,
      { accountId: row.accountId, orderId: Number(row.id) },
      { traceparent: row.traceparent },
    );
  }
}
