import { Injectable } from '@nestjs/common';
import { DueRow, LostJobSource, stagedJob, SweepSource } from '@app/jobs';
import { CREATED_AT_US } from './views';
import { DeliverWebhookBatchJob, DeliverWebhookJob } from './webhook.jobs';

type DueDelivery = DueRow & { webhookId: number; createdAtUs: string; fannedOut: boolean };

/** Pending deliveries one sweep interval past their next attempt: their job is the one for that attempt. */
@Injectable()
@LostJobSource()
export class WebhookDeliveriesSweepSource implements SweepSource {
  readonly name = 'webhook_deliveries';
  readonly dueSql = `SELECT d.id, d.account_id AS "accountId", d.attempts, d.traceparent,
         coalesce(d.next_attempt_at, d.created_at)::text AS "dueAt", d.webhook_id AS "webhookId", ${CREATED_AT_US},
         (d.event_id IS NOT NULL AND d.resend_of IS NULL) AS "fannedOut"
       FROM webhook_deliveries d
       WHERE d.status = 'pending'
         AND coalesce(d.next_attempt_at, d.created_at) < now() - make_interval(secs => $1::double precision / 1000)
         AND (coalesce(d.next_attempt_at, d.created_at), d.id) > (coalesce($3::timestamptz, '-infinity'), coalesce($4::bigint, 0))
       ORDER BY coalesce(d.next_attempt_at, d.created_at), d.id LIMIT $2
       FOR UPDATE SKIP LOCKED`;

  // A fanned-out delivery's first attempt belongs to its batch's job (the same id from each of its rows).
  job(row: DueDelivery) {
    if (row.fannedOut && !row.attempts)
      return stagedJob(
        DeliverWebhookBatchJob,
        { accountId: row.accountId, webhookId: Number(row.webhookId), createdAtUs: row.createdAtUs },
        { traceparent: row.traceparent },
      );
    return stagedJob(
      DeliverWebhookJob,
      { accountId: row.accountId, deliveryId: Number(row.id), attempt: row.attempts ?? 0 },
      { traceparent: row.traceparent },
    );
  }
}
