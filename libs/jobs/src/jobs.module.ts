import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobEnqueuer } from './job-enqueuer.service';
import { JobHandlers } from './job-handlers';
import { JobQueues } from './job-queues';
import { LostJobRequeue } from './lost-job-requeue.service';
import { LostJobSweepService } from './lost-job-sweep.service';
import { OutboxEntity } from './outbox.entity';
import { OutboxDispatch } from './outbox-dispatch.service';
import { OutboxRelayService } from './outbox-relay.service';
import { QueueConnection, QueueConnectionModule, QUEUE_CONNECTION, SharedQueueConnection } from './queue-connection';
import { MaintenanceQueue } from './queue-definition';
import { QueueHandshake } from './queue-handshake';
import { QueueModule } from './queue.module';
import { RedisMemoryWatch } from './redis-memory-watch.service';
import { RetentionService } from './retention.service';

@Module({})
export class JobsModule {
  static register(role: 'producer' | 'worker'): DynamicModule {
    // One instance for both imports below: a second would open a second cluster client.
    const connection = QueueConnectionModule.register(role);
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
        ...(role === 'worker' ? [QueueModule.register(MaintenanceQueue)] : []),
        DiscoveryModule,
        TypeOrmModule.forFeature([OutboxEntity]),
      ],
      providers: [
        JobQueues,
        QueueHandshake,
        SharedQueueConnection,
        RedisMemoryWatch,
        JobEnqueuer,
        OutboxDispatch,
        ...(role === 'worker'
          ? [JobHandlers, OutboxRelayService, LostJobRequeue, LostJobSweepService, RetentionService]
          : []),
      ],
      exports: [JobQueues, OutboxDispatch, ...(role === 'worker' ? [JobHandlers] : [])],
    };
  }
}
