/** Every BullMQ queue of the service. */
export enum QueueName {
  Messages = 'messages',
  Fulfilment = 'fulfilment',
  Events = 'events',
  Webhooks = 'webhooks',
}

/** Every job, named once; JobPayloads pairs each with its payload and JOB_QUEUE with its queue. */
export enum JobName {
  ProcessMessage = 'message.process',
  FulfilOrder = 'order.fulfil',
  FanOutEvent = 'event.fan-out',
  DeliverWebhook = 'webhook.deliver',
}

export interface JobPayloads {
  [JobName.ProcessMessage]: { accountId: number; messageId: string };
  [JobName.FulfilOrder]: { accountId: number; orderId: number };
  [JobName.FanOutEvent]: { accountId: number; eventId: number };
  [JobName.DeliverWebhook]: { accountId: number; deliveryId: number; attempt: number };
}

export const JOB_QUEUE: { [J in JobName]: QueueName } = {
  [JobName.ProcessMessage]: QueueName.Messages,
  [JobName.FulfilOrder]: QueueName.Fulfilment,
  [JobName.FanOutEvent]: QueueName.Events,
  [JobName.DeliverWebhook]: QueueName.Webhooks,
};

/**
 * Deterministic job ids: the same piece of work always gets the same id, so a retried
 * enqueue (outbox relay, sweep) is a no-op while the first job is still known to BullMQ.
 * BullMQ forbids ':' in custom ids.
 */
export const jobIds = {
  message: (messageId: string) => messageId,
  fulfilment: (orderId: number) => `order-${orderId}`,
  fanOut: (eventId: number) => `event-${eventId}`,
  // One job per attempt: a retry is enqueued while the job of the previous attempt is still active.
  delivery: (deliveryId: number, attempt: number) => `delivery-${deliveryId}-${attempt}`,
};

export interface StagedJob<J extends JobName = JobName> {
  name: J;
  payload: JobPayloads[J];
  jobId: string;
  /** Delay the job until this instant (a future ship date). */
  runAt?: Date | null;
}
