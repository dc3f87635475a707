import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery } from '@app/database';
import { defineJob } from './job-definition';
import { scheduleJob } from './job-schedule';
import { JobQueues } from './job-queues';
import { OnJob } from './on-job.decorator';
import { MaintenanceQueue } from './queue-definition';
import { RetentionSource } from './retention-source';

/** Removes finished records past their retention; scheduled (see RetentionService), never staged. */
export const RetentionJob = defineJob<Record<string, never>>({
  name: 'retention.run',
  queue: MaintenanceQueue,
  jobId: () => 'retention',
});

/** Records per statement: a short transaction, so the API's writes never wait long on it. */
const BATCH = 1_000;
/** A run stops after this long and leaves the rest to the next one: a backlog never holds a worker slot for long. */
const RUN_BUDGET_MS = 20_000;

const removed = new Counter({
  name: 'petstore_retention_removed_total',
  help: 'Records removed by retention, by source',
  labelNames: ['source'] as const,
});

/**
 * Retention: every RETENTION_INTERVAL_MS one job (a BullMQ job scheduler: one run across all
 * workers, whichever takes it) removes the records past their time, source by source, in
 * small batches. docs/operations.md, "Retention", has the defaults and what is kept for ever.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap {
  private readonly logger = new Logger(RetentionService.name);
  private sources: RetentionSource[] = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly discovery: DiscoveryService,
    private readonly config: AppConfig,
    private readonly queues: JobQueues,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.sources = this.discovery
      .getProviders({ metadataKey: RetentionSource.KEY })
      .map((wrapper) => wrapper.instance as RetentionSource);
    await scheduleJob(this.queues, RetentionJob, this.config.retention.intervalMs, this.logger);
  }

  @OnJob(RetentionJob)
  async run(): Promise<Record<string, number>> {
    const deadline = Date.now() + RUN_BUDGET_MS;
    const counts: Record<string, number> = {};
    for (const source of this.sources) {
      counts[source.name] = 0;
      for (;;) {
        const [{ removed: n }] = await preparedQuery<{ removed: number }>(this.dataSource, source.removeSql, [
          source.keepDays(this.config),
          BATCH,
        ]);
        counts[source.name] += n;
        removed.inc({ source: source.name }, n);
        if (n < BATCH || Date.now() > deadline) break;
      }
    }
    if (Object.values(counts).some(Boolean)) this.logger.log({ removed: counts }, 'retention removed records');
    return counts;
  }
}
