import { Injectable } from '@nestjs/common';
import { DueRow, LostJobSource, stagedJob, SweepSource } from '@app/jobs';
import { DeliverWebhookJob } from './webhook.jobs';

/** Pending deliveries one sweep interval past their next attempt: their job is the one for that attempt. */
@Injectable()
@LostJobSource()
export class WebhookDeliveriesSweepSource implements SweepSource {
  readonly name = 'webhook_deliveries';
  readonly dueSql = `SELECT id, account_id AS "accountId", attempts, traceparent,
         coalesce(next_attempt_at, created_at)::text AS "dueAt"
       FROM webhook_deliveries
       WHERE status = 'pending'
         AND coalesce(next_attempt_at, created_at) < now() - make_interval(secs => $1::double precision / 1000)
         AND (coalesce(next_attempt_at, created_at), id) > (coalesce($3::timestamptz, '-infinity'), coalesce($4::bigint, 0))
       ORDER BY coalesce(next_attempt_at, created_at), id LIMIT $2
       FOR UPDATE SKIP LOCKED`;

  job(row: DueRow) {
    return stagedJob(
      DeliverWebhookJob,
      { accountId: row.accountId, deliveryId: Number(row.id), attempt: row.attempts ?? 0 },
      { traceparent: row.traceparent },
    );
  }
}
