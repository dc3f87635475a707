import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import {
  createPartitionsAhead,
  dropPartition,
  historyPartitions,
  isLockTimeout,
  preparedQuery,
  queryPlannedPerCall,
} from '@app/database';
import { JobCatalog, WorkerFeature } from './job-catalog';
import { defineJob } from './job-definition';
import { scheduleJob } from './job-schedule';
import { JobQueues } from './job-queues';
import { retentionQueries } from './jobs.queries';
import { OnJob } from './on-job.decorator';
import { MaintenanceQueue } from './queue-definition';
import { PartitionedHistory, RetentionSource } from './retention-source';

export const RetentionJob = defineJob<Record<string, never>>({
  name: 'retention.run',
  queue: MaintenanceQueue,
  jobId: () => 'retention',
});

/** The platform's own list: retention's job, whose handler JobsModule provides to the worker. */
export const PLATFORM_WORKER: WorkerFeature = { jobs: [RetentionJob], sweeps: [], retention: [] };

/** Records per statement: a short transaction, so the API's writes never wait long on it. */
const BATCH = 1_000;
/** A run leaves the rest to the next one after this: a backlog never holds a worker slot for long. */
const RUN_BUDGET_MS = 20_000;

// Writes queued behind a waiting DDL wait as long, well inside the API's 2 s pool wait; the next run retries.
const DDL_LOCK_TIMEOUT_MS = 200;

const dropped = new Counter({
  name: 'petstore_retention_partitions_dropped_total',
  help: 'Partitions of history tables dropped by retention, by source',
  labelNames: ['source'] as const,
});

const removed = new Counter({
  name: 'petstore_retention_removed_total',
  help: 'Records removed by retention, by source',
  labelNames: ['source'] as const,
});

/** One run across all workers (a job scheduler) every RETENTION_INTERVAL_MS; docs/storage.md has the partitions. */
@Injectable()
export class RetentionService implements OnApplicationBootstrap {
  private readonly logger = new Logger(RetentionService.name);
  private readonly sources: readonly RetentionSource[];

  constructor(
    private readonly dataSource: DataSource,
    catalog: JobCatalog,
    private readonly config: AppConfig,
    private readonly queues: JobQueues,
  ) {
    this.sources = catalog.retention;
  }

  async onApplicationBootstrap(): Promise<void> {
    // Rows past the newest period go to the overflow partition, which the next run splits: not fatal.
    await this.createAhead().catch((err: Error) =>
      this.logger.warn({ err: { message: err.message } }, 'partitions not created ahead yet'),
    );
    await scheduleJob(this.queues, RetentionJob, this.config.retention.intervalMs, this.logger);
  }

  @OnJob(RetentionJob)
  async run(): Promise<Record<string, number>> {
    await this.createAhead();
    const deadline = Date.now() + RUN_BUDGET_MS;
    const counts: Record<string, number> = {};
    for (const source of this.sources) {
      if (source.partitioned) {
        counts[source.name] = await this.dropExpired(source, source.partitioned);
        continue;
      }
      counts[source.name] = 0;
      for (;;) {
        const [{ removed: n }] = await preparedQuery(
          this.dataSource,
          source.remove!({ olderThanDays: source.keepDays(this.config), limit: BATCH }),
        );
        counts[source.name] += n;
        removed.inc({ source: source.name }, n);
        if (n < BATCH || Date.now() > deadline) break;
      }
    }
    if (Object.values(counts).some(Boolean)) this.logger.log({ removed: counts }, 'retention removed records');
    return counts;
  }

  private async createAhead(): Promise<void> {
    const { partitionWidthMs: widthMs, partitionsAhead: ahead } = this.config.retention;
    for (const { partitioned } of this.sources)
      if (partitioned)
        await this.waitingForLocks(
          createPartitionsAhead(this.dataSource, partitioned, {
            widthMs,
            ahead,
            nowMs: Date.now(),
            lockTimeoutMs: DDL_LOCK_TIMEOUT_MS,
          }),
        );
  }

  /** Its rows must all be old too: a time-ordered id's period starts when the job moves its sequence up. */
  private async dropExpired(source: RetentionSource, h: PartitionedHistory): Promise<number> {
    const cutoff = Date.now() - source.keepDays(this.config) * 86_400_000;
    let n = 0;
    for (const p of await historyPartitions(this.dataSource, h)) {
      if (p.toMs > cutoff) break;
      const table = `"${p.name}"`;
      if (h.key === 'time-ordered-id') {
        const [young] = await queryPlannedPerCall(this.dataSource, retentionQueries.youngRow(table, cutoff));
        if (young) continue;
      }
      if (h.openRows) {
        const [open] = await queryPlannedPerCall(this.dataSource, retentionQueries.openRow(table, h.openRows));
        if (open) continue;
      }
      if (h.beforeDrop) await this.dataSource.query(h.beforeDrop(table));
      if (await this.waitingForLocks(dropPartition(this.dataSource, h, p.name, DDL_LOCK_TIMEOUT_MS))) continue;
      dropped.inc({ source: source.name });
      n++;
    }
    return n;
  }

  /** True when the DDL gave up waiting for its locks (logged; the next run tries again). */
  private async waitingForLocks(ddl: Promise<unknown>): Promise<boolean> {
    try {
      await ddl;
      return false;
    } catch (err) {
      if (!isLockTimeout(err)) throw err;
      this.logger.warn('a partition change waited too long for its locks; the next run tries again');
      return true;
    }
  }
}
