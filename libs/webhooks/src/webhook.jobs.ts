import { defineJob, defineQueue } from '@app/jobs';

/** Deliveries wait on receivers: their own queue, so they scale apart (a worker group of their own). */
export const WebhookQueue = defineQueue('webhooks');

// Retries are new jobs scheduled by the delivery service, not BullMQ's: one id per attempt, since a retry is
// enqueued while the job of the previous attempt is still active.
export const DeliverWebhookJob = defineJob<{ accountId: number; deliveryId: number; attempt: number }>({
  name: 'webhook.deliver',
  queue: WebhookQueue,
  jobId: ({ deliveryId, attempt }) => `delivery-${deliveryId}-${attempt}`,
  concurrency: (config) => config.webhooks.concurrency,
});

// The first attempts of the deliveries one fan-out statement wrote for one webhook: they share its transaction's
// created_at (microseconds since the epoch, as text), so the lost-job sweep finds the job from any of its rows.
export const DeliverWebhookBatchJob = defineJob<{ accountId: number; webhookId: number; createdAtUs: string }>({
  name: 'webhook.deliver-batch',
  queue: WebhookQueue,
  jobId: ({ webhookId, createdAtUs }) => `delivery-batch-${webhookId}-${createdAtUs}`,
  concurrency: (config) => config.webhooks.concurrency,
});
