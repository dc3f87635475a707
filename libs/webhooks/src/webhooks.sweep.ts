import { stagedJob, sweepSource } from '@app/jobs';
import { DueDelivery, webhookDeliveryQueries } from './webhooks.queries';
import { DeliverWebhookBatchJob, DeliverWebhookJob } from './webhook.jobs';

/** Pending deliveries one sweep interval past their next attempt: their job is the one for that attempt. */
export const webhookDeliveriesSweep = sweepSource<DueDelivery>({
  name: 'webhook_deliveries',
  due: webhookDeliveryQueries.sweepDue,
  // A fanned-out delivery's first attempt belongs to its batch's job (the same id from each of its rows).
  job: ([row]) =>
    row.fannedOut && !row.attempts
      ? stagedJob(
          DeliverWebhookBatchJob,
          { accountId: row.accountId, webhookId: Number(row.webhookId), createdAtUs: row.createdAtUs },
          { traceparent: row.traceparent },
        )
      : stagedJob(
          DeliverWebhookJob,
          { accountId: row.accountId, deliveryId: Number(row.id), attempt: row.attempts ?? 0 },
          { traceparent: row.traceparent },
        ),
});
