import { defineJob, QueueName } from '@app/jobs';

/**
 * One attempt of one delivery. Retries are new jobs scheduled by the delivery service (one id per
 * attempt: a retry is enqueued while the job of the previous attempt is still active), not BullMQ's.
 */
export const DeliverWebhookJob = defineJob<{ accountId: number; deliveryId: number; attempt: number }>({
  name: 'webhook.deliver',
  queue: QueueName.Webhooks,
  jobId: ({ deliveryId, attempt }) => `delivery-${deliveryId}-${attempt}`,
  concurrency: (config) => config.webhooks.concurrency,
});
