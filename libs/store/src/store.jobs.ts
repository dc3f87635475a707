import { defineJob, QueueName } from '@app/jobs';

/** Completes an order when it is due (at once, or at its requested ship date). */
export const FulfilOrderJob = defineJob<{ accountId: number; orderId: number }>({
  name: 'order.fulfil',
  queue: QueueName.Fulfilment,
  jobId: ({ orderId }) => `order-${orderId}`,
});
