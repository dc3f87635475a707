import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { QueueName } from '@app/jobs';
import { QUEUE_STATES, readWorkerStateFrom, WorkerState } from './worker-metrics';
import { preparedQuery } from '@app/database';

/** Reads the queue and outbox gauges' values for each scrape of /metrics. */
@Injectable()
export class WorkerStateService implements WorkerState, OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly dataSource: DataSource,
    private readonly moduleRef: ModuleRef,
  ) {}

  onApplicationBootstrap(): void {
    readWorkerStateFrom(this);
  }

  onApplicationShutdown(): void {
    readWorkerStateFrom(undefined);
  }

  async queues(): Promise<Record<string, Record<string, number>>> {
    const names = Object.values(QueueName);
    const counts = await Promise.all(
      names.map((name) =>
        this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }).getJobCounts(...QUEUE_STATES),
      ),
    );
    return Object.fromEntries(names.map((name, i) => [name, counts[i]]));
  }

  /** count(*) and min(created_at) of a table kept small (rows are deleted once enqueued), on its created_at index. */
  async outbox(): Promise<{ waiting: number; oldestAgeSeconds: number }> {
    const [row]: { waiting: number; age: number }[] = await preparedQuery(
      this.dataSource,
      `SELECT count(*)::int AS waiting,
              coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age
         FROM outbox`,
      [],
    );
    return { waiting: row.waiting, oldestAgeSeconds: row.age };
  }
}
