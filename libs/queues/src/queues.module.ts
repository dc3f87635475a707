import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { redisOptions } from '@app/redis';
import { QueueHandshake } from './queue-handshake';
import { QueueName } from './queue-names';

/**
 * BullMQ connection and every queue.
 * - `producer` (the API): commands fail fast while Redis is away (no offline queue), as
 *   BullMQ advises for producers; the outbox keeps the job and the relay enqueues it later,
 *   so a request never hangs on Redis.
 * - `worker`: commands wait for Redis to return (workers must block, not fail).
 */
@Module({})
export class QueuesModule {
  static register(role: 'producer' | 'worker'): DynamicModule {
    return {
      module: QueuesModule,
      global: true,
      imports: [
        BullModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            prefix: 'petstore',
            connection: {
              ...redisOptions(config.redisUrl),
              // A producer command cut mid-flight by a Redis outage is retried once, then fails:
              // with null it would wait for Redis to return, and so would the request.
              maxRetriesPerRequest: role === 'worker' ? null : 1,
              enableOfflineQueue: role === 'worker',
            },
          }),
        }),
        BullModule.registerQueue(...Object.values(QueueName).map((name) => ({ name }))),
      ],
      providers: [QueueHandshake],
      exports: [BullModule],
    };
  }
}
