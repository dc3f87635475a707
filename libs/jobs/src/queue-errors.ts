import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Queue } from 'bullmq';
import { countRedisError } from '@app/redis';
import { QueueName } from './queue-names';

/**
 * A queue with no 'error' listener has BullMQ print each error with its stack to stderr (its
 * connection lost while Redis restarts, its job scheduler's connection too). Here each is
 * counted by kind, and logged once per distinct message in a row.
 */
@Injectable()
export class QueueErrors implements OnModuleInit {
  private readonly logger = new Logger('Queues');

  constructor(private readonly moduleRef: ModuleRef) {}

  onModuleInit(): void {
    for (const name of Object.values(QueueName)) {
      const queue = this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
      let last: string | undefined;
      queue.on('error', (err: Error) => {
        const kind = countRedisError('petstore-queues', err);
        if (err.message !== last) this.logger.warn({ queue: name, kind }, `queue ${name}: ${err.message}`);
        last = err.message;
      });
    }
  }
}
