import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Provider, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { QueueName } from './queue-names';

/**
 * Registers a WorkerHost for `queue` with its BullMQ worker options taken from AppConfig
 * (WORKER_CONCURRENCY, JOB_LOCK_MS). @Processor() options are fixed where the class is declared,
 * before any config exists, so the decorator is applied here instead: when Nest builds the
 * provider, which is before @nestjs/bullmq reads it and starts the worker.
 */
export function processorProvider<T extends WorkerHost>(type: Type<T>, queue: QueueName): Provider {
  return {
    provide: type,
    inject: [AppConfig, ModuleRef],
    useFactory: (config: AppConfig, moduleRef: ModuleRef) => {
      Processor(queue, {
        concurrency: config.jobs.concurrency,
        // A killed worker's jobs are retried once its locks lapse, found by the stalled check.
        lockDuration: config.jobs.lockMs,
        stalledInterval: config.jobs.lockMs,
      })(type);
      return moduleRef.create(type);
    },
  };
}
