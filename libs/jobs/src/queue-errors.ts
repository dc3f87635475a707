import { Logger } from '@nestjs/common';
import { Queue } from 'bullmq';
import { countRedisError } from '@app/redis';

const logger = new Logger('Queues');

// Without an 'error' listener BullMQ prints each error with its stack to stderr. Attached when the queue is
// built (JobQueues' constructor), not in onModuleInit: a refusing Redis answers while the app is still being built.
export function watchQueueErrors(queue: Queue): void {
  let last: string | undefined;
  queue.on('error', (err: Error) => {
    const kind = countRedisError('petstore-queues', err);
    if (err.message !== last) logger.warn({ queue: queue.name, kind }, `queue ${queue.name}: ${err.message}`);
    last = err.message;
  });
}
