import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { describe } from '@app/errors';
import { StagedJob } from './job-definition';
import { OutboxService } from './outbox.service';
import { sweepRequeued } from './sweep-metrics';
import { DueRow, LostJobSource, SweepSource } from './sweep-source';
import { preparedQuery } from '@app/database';

/**
 * The safety net behind "accepted means done": an open order, an unprocessed message, an
 * event not yet fanned out or a pending webhook delivery whose job BullMQ no longer holds
 * (Redis flushed, enqueue lost, retries spent while Postgres was down) gets its job again.
 * Job ids are deterministic and processors idempotent, so several workers sweeping at once,
 * or a job that reappears from the outbox, still do the work once.
 */
@Injectable()
export class LostJobSweepService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LostJobSweepService.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  private sources: SweepSource[] = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly discovery: DiscoveryService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.sources = this.discovery
      .getProviders({ metadataKey: LostJobSource.KEY })
      .map((wrapper) => wrapper.instance as SweepSource);
    this.timer = setInterval(() => {
      this.running ??= this.sweepOnce()
        .then((requeued) => {
          for (const [name, count] of Object.entries(requeued)) {
            if (count) this.logger.warn({ source: name, requeued: count }, 'lost jobs re-enqueued');
          }
        })
        .catch((err: unknown) => this.logger.error({ err: describe(err) }, 'lost-job sweep failed'))
        .then(() => (this.running = undefined));
    }, this.config.jobs.sweepIntervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass over every source; returns how many records got their job back, by source. */
  async sweepOnce(batchSize = 500): Promise<Record<string, number>> {
    const requeued: Record<string, number> = {};
    for (const source of this.sources) {
      requeued[source.name] = await this.sweep(source, batchSize);
      // Incremented by 0 too: each source's series exists from the first pass, so rate() sees its first increase.
      sweepRequeued().inc({ source: source.name }, requeued[source.name]);
    }
    return requeued;
  }

  private async sweep(source: SweepSource, batchSize: number): Promise<number> {
    const due: DueRow[] = await preparedQuery(this.dataSource, source.dueSql, [
      this.config.jobs.sweepIntervalMs,
      batchSize,
    ]);
    if (!due.length) return 0;
    const jobs = due.map((row) => source.job(row));
    // A job still waiting in the outbox belongs to the relay, not to the sweep.
    const staged: { job_id: string }[] = await preparedQuery(
      this.dataSource,
      'SELECT job_id FROM outbox WHERE job_id = ANY($1::text[])',
      [jobs.map((job) => job.jobId)],
    );
    const inOutbox = new Set(staged.map((r) => r.job_id));
    const lost: StagedJob[] = [];
    for (const job of jobs) {
      if (inOutbox.has(job.jobId)) continue;
      if (await this.outbox.takeBackIfLost(job)) lost.push(job);
    }
    if (!lost.length) return 0;
    await this.outbox.enqueueNow(lost);
    return lost.length;
  }
}
