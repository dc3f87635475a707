import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { Queue } from 'bullmq';
import { AppConfig } from '@app/config';
import { JobQueues } from './job-queues';
import { QueueDefinition, queuePrefix } from './queue-definition';

@Module({})
export class QueueModule {
  static register(...queues: QueueDefinition[]): DynamicModule {
    return {
      module: QueueModule,
      imports: queues.map(({ name }) =>
        BullModule.registerQueueAsync({
          name,
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ prefix: queuePrefix(config.redisNamespace, name) }),
        }),
      ),
      providers: queues.map(({ name }) => ({
        provide: `JobQueues.add(${name})`,
        inject: [getQueueToken(name), JobQueues],
        useFactory: (queue: Queue, registry: JobQueues) => registry.add(queue),
      })),
      exports: [BullModule],
    };
  }
}
