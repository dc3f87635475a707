/**
 * A BullMQ queue, declared once by the feature whose jobs run on it (in its `*.jobs.ts`) and
 * registered by that feature's module (QueueModule.register).
 */
export interface QueueDefinition {
  readonly name: string;
}

export function defineQueue(name: string): QueueDefinition {
  return { name };
}

/**
 * A queue's BullMQ key prefix. The `{...}` is its Redis Cluster hash tag: every key of a queue in
 * one slot (BullMQ's scripts touch many at once), and each queue in its own slot, so queues
 * spread over the masters (docs/operations-at-scale.md, "Upgrading the key layout").
 */
export const queuePrefix = (queue: string) => `petstore:{${queue}}`;

/** The platform's queue: scheduled housekeeping (job schedulers, never staged), such as retention. */
export const MaintenanceQueue = defineQueue('maintenance');
