import { defineJob, defineQueue } from '@app/jobs';

export const FulfilmentQueue = defineQueue('fulfilment');

/** Completes an order when it is due (at once, or at its requested ship date). */
export const FulfilOrderJob = defineJob<{ accountId: number; orderId: number }>({
  name: 'order.fulfil',
  queue: FulfilmentQueue,
  jobId: ({ orderId }) => `order-${orderId}`,
});
