/** Declared once by the feature whose jobs run on it (its `*.jobs.ts`); JobsModule registers the queues of the listed jobs. */
export interface QueueDefinition {
  readonly name: string;
}

export function defineQueue(name: string): QueueDefinition {
  return { name };
}

// `{queue}` is a Redis Cluster hash tag: a queue's keys share a slot (BullMQ's scripts touch many at once), and
// queues spread over the masters. The deployment's namespace comes first (`petstore:{messages}` by default).
export const queuePrefix = (namespace: string, queue: string) => `${namespace}:{${queue}}`;

/** The platform's queue: scheduled housekeeping (job schedulers, never staged), such as retention. */
export const MaintenanceQueue = defineQueue('maintenance');
