/** Every BullMQ queue of the service. Jobs are declared by the features that own them (defineJob). */
export enum QueueName {
  Messages = 'messages',
  Fulfilment = 'fulfilment',
  Events = 'events',
  Webhooks = 'webhooks',
}

/**
 * Each queue's BullMQ key prefix. The `{...}` is its Redis Cluster hash tag: every key of a
 * queue in one slot (BullMQ's scripts touch many at once), and each queue in its own slot, so
 * queues spread over the masters. Before this layout every queue was under `petstore` (see
 * docs/operations-at-scale.md, "Upgrading the key layout").
 */
export const queuePrefix = (queue: QueueName) => `petstore:{${queue}}`;
