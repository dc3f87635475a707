import { getQueueToken } from '@nestjs/bullmq';
import { Logger, Provider } from '@nestjs/common';
import { Queue } from 'bullmq';
import { countRedisError } from '@app/redis';
import { QueueName } from './queue-names';

/**
 * A queue with no 'error' listener has BullMQ print each error with its stack to stderr (its
 * connection lost while Redis restarts, its job scheduler's connection too). Here each is
 * counted by kind, and logged once per distinct message in a row.
 *
 * The listeners go on as soon as the queues exist, not in onModuleInit: a queue connects when
 * it is built, and a Redis that refuses the connection answers while the rest of the
 * application is still being built (Postgres's pool, for one). With BullMQ 6 and Nest 12 those
 * first errors came before onModuleInit, and the CLI printed one stack per queue while Redis
 * was down.
 */
export class QueueErrors {
  private readonly logger = new Logger('Queues');

  constructor(queues: Queue[]) {
    for (const queue of queues) this.watch(queue);
  }

  /** Built by Nest right after the queues it injects. */
  static provider(): Provider {
    return {
      provide: QueueErrors,
      inject: Object.values(QueueName).map((name) => getQueueToken(name)),
      useFactory: (...queues: Queue[]) => new QueueErrors(queues),
    };
  }

  private watch(queue: Queue): void {
    let last: string | undefined;
    queue.on('error', (err: Error) => {
      const kind = countRedisError('petstore-queues', err);
      if (err.message !== last) this.logger.warn({ queue: queue.name, kind }, `queue ${queue.name}: ${err.message}`);
      last = err.message;
    });
  }
}
