import { Injectable, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { preparedQuery } from '@app/database';
import { JobCatalog, JobQueues, outboxQueries } from '@app/jobs';
import { countFromZero, QUEUE_STATES, readWorkerStateFrom, WorkerState } from './worker-metrics';

/** Reads the queue and outbox gauges' values for each scrape of /metrics, for the queues of this worker's jobs. */
@Injectable()
export class WorkerStateService implements WorkerState, OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly dataSource: DataSource,
    private readonly jobQueues: JobQueues,
    private readonly catalog: JobCatalog,
  ) {}

  onModuleInit(): void {
    countFromZero(this.catalog.queues);
  }

  onApplicationBootstrap(): void {
    readWorkerStateFrom(this);
  }

  onApplicationShutdown(): void {
    readWorkerStateFrom(undefined);
  }

  async queues(): Promise<Record<string, Record<string, number>>> {
    const names = this.catalog.queues;
    const counts = await Promise.all(names.map((name) => this.jobQueues.get(name).getJobCounts(...QUEUE_STATES)));
    return Object.fromEntries(names.map((name, i) => [name, counts[i]]));
  }

  async outbox(): Promise<{ waiting: number; oldestAgeSeconds: number }> {
    const [row] = await preparedQuery<{ waiting: number; age: number }>(this.dataSource, outboxQueries.backlog());
    return { waiting: row.waiting, oldestAgeSeconds: row.age };
  }
}
