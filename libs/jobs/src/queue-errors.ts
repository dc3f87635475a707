import { Logger } from '@nestjs/common';
import { Queue } from 'bullmq';
import { countRedisError } from '@app/redis';

const logger = new Logger('Queues');

/**
 * A queue with no 'error' listener has BullMQ print each error with its stack to stderr (its
 * connection lost while Redis restarts, its job scheduler's connection too). Here each is
 * counted by kind, and logged once per distinct message in a row.
 *
 * The listener goes on as soon as the queue exists (JobQueues.add, from the provider built right
 * after it), not in onModuleInit: a queue connects when it is built, and a Redis that refuses the
 * connection answers while the rest of the application is still being built.
 */
export function watchQueueErrors(queue: Queue): void {
  let last: string | undefined;
  queue.on('error', (err: Error) => {
    const kind = countRedisError('petstore-queues', err);
    if (err.message !== last) logger.warn({ queue: queue.name, kind }, `queue ${queue.name}: ${err.message}`);
    last = err.message;
  });
}
