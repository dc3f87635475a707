import { Worker } from 'bullmq';
import { QueueConsumer } from './queue-consumer';
import type { QueueWorkers } from './queue-workers';

/** For unit specs: QueueWorkers with one consumer of `worker` (its events not listened to). */
export function queueWorkersOf(worker: Worker): { workers: QueueWorkers; consumer: QueueConsumer } {
  const consumer = new QueueConsumer(worker);
  return { workers: { consumers: [consumer] } as unknown as QueueWorkers, consumer };
}
