import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import { AppConfig } from '@app/config';
import { JobCatalog, WorkerFeature } from './job-catalog';
import { JobEnqueuer } from './job-enqueuer.service';
import { JobHandlers } from './job-handlers';
import { JobQueues } from './job-queues';
import { LostJobRequeue } from './lost-job-requeue.service';
import { LostJobSweepService } from './lost-job-sweep.service';
import { OutboxEntity } from './outbox.entity';
import { OutboxDispatch } from './outbox-dispatch.service';
import { OutboxRelayService } from './outbox-relay.service';
import { QueueConnection, QueueConnectionModule, QUEUE_CONNECTION, SharedQueueConnection } from './queue-connection';
import { MaintenanceQueue, queuePrefix } from './queue-definition';
import { QueueHandshake } from './queue-handshake';
import { RedisMemoryWatch } from './redis-memory-watch.service';
import { RetentionService } from './retention.service';

/** Each app names every feature's lists (`features`): their jobs' queues are registered here, and nowhere else. */
@Module({})
export class JobsModule {
  static register(role: 'producer' | 'worker', features: readonly WorkerFeature[]): DynamicModule {
    // One instance for both imports below: a second would open a second cluster client.
    const connection = QueueConnectionModule.register(role);
    const catalog = new JobCatalog(features);
    // A producer never stages onto the maintenance queue (its jobs are scheduled by the worker).
    const queues = catalog.queues.filter((name) => role === 'worker' || name !== MaintenanceQueue.name);
    return {
      module: JobsModule,
      global: true,
      imports: [
        connection,
        BullModule.forRootAsync({
          imports: [connection],
          inject: [QUEUE_CONNECTION],
          useFactory: (queueConnection: QueueConnection) => ({ connection: queueConnection }),
        }),
        ...queues.map((name) =>
          BullModule.registerQueueAsync({
            name,
            inject: [AppConfig],
            useFactory: (config: AppConfig) => ({ prefix: queuePrefix(config.redisNamespace, name) }),
          }),
        ),
        DiscoveryModule,
        TypeOrmModule.forFeature([OutboxEntity]),
      ],
      providers: [
        { provide: JobCatalog, useValue: catalog },
        {
          provide: JobQueues,
          inject: queues.map((name) => getQueueToken(name)),
          useFactory: (...q: Queue[]) => new JobQueues(q),
        },
        QueueHandshake,
        SharedQueueConnection,
        RedisMemoryWatch,
        JobEnqueuer,
        OutboxDispatch,
        ...(role === 'worker'
          ? [JobHandlers, OutboxRelayService, LostJobRequeue, LostJobSweepService, RetentionService]
          : []),
      ],
      exports: [BullModule, JobCatalog, JobQueues, OutboxDispatch, ...(role === 'worker' ? [JobHandlers] : [])],
    };
  }
}
