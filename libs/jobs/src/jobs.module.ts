import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobHandlers } from './job-handlers';
import { LostJobSweepService } from './lost-job-sweep.service';
import { OutboxEntity } from './outbox.entity';
import { OutboxRelayService } from './outbox-relay.service';
import { OutboxService } from './outbox.service';
import { QueueErrors } from './queue-errors';
import { QueueHandshake } from './queue-handshake';
import { RetentionService } from './retention.service';
import { QueueConnection, QueueConnectionModule, QUEUE_CONNECTION, SharedQueueConnection } from './queue-connection';
import { queuePrefix, QueueName } from './queue-names';

/**
 * Jobs: the BullMQ connection (see QueueConnectionModule for the producer's and the worker's)
 * and every queue, each under its own Redis Cluster hash tag; the transactional outbox; and for
 * the worker the outbox relay, the lost-job sweep and the @OnJob handler registry.
 */
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
        BullModule.registerQueue(...Object.values(QueueName).map((name) => ({ name, prefix: queuePrefix(name) }))),
        DiscoveryModule,
        TypeOrmModule.forFeature([OutboxEntity]),
      ],
      providers: [
        QueueHandshake,
        QueueErrors.provider(),
        SharedQueueConnection,
        OutboxService,
        ...(role === 'worker' ? [JobHandlers, OutboxRelayService, LostJobSweepService, RetentionService] : []),
      ],
      exports: [BullModule, OutboxService, ...(role === 'worker' ? [JobHandlers] : [])],
    };
  }
}
