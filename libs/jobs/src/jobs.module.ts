import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { redisOptions } from '@app/redis';
import { dropErrorsOfClosedConnections } from './closed-connection-errors';
import { JobHandlers } from './job-handlers';
import { LostJobSweepService } from './lost-job-sweep.service';
import { OutboxRelayService } from './outbox-relay.service';
import { OutboxService } from './outbox.service';
import { QueueHandshake } from './queue-handshake';
import { QueueName } from './queue-names';

/**
 * Jobs: the BullMQ connection and every queue, the transactional outbox, and for the worker
 * the outbox relay, the lost-job sweep and the @OnJob handler registry.
 * - `producer` (the API): commands fail fast while Redis is away (no offline queue), as
 *   BullMQ advises for producers; the outbox keeps the job and the relay enqueues it later,
 *   so a request never hangs on Redis.
 * - `worker`: commands wait for Redis to return (workers must block, not fail).
 */
@Module({})
export class JobsModule {
  static register(role: 'producer' | 'worker'): DynamicModule {
    dropErrorsOfClosedConnections();
    return {
      module: JobsModule,
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
        DiscoveryModule,
      ],
      providers: [
        QueueHandshake,
        OutboxService,
        ...(role === 'worker' ? [JobHandlers, OutboxRelayService, LostJobSweepService] : []),
      ],
      exports: [BullModule, OutboxService, ...(role === 'worker' ? [JobHandlers] : [])],
    };
  }
}
