import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery, TransactionRunner } from '@app/database';
import { describe } from '@app/errors';
import { LostJobRequeue } from './lost-job-requeue.service';
import { outboxQueries } from './jobs.queries';
import { OutboxEntity } from './outbox.entity';
import { sweepRequeued } from './sweep-metrics';
import { JobCatalog } from './job-catalog';
import { StagedJob } from './job-definition';
import { DuePage, DueRow, SweepSource } from './sweep-source';

/** Pages a pass reads past rows whose jobs are all in hand (a legit backlog) before it stops. */
const IDLE_PAGES_PER_PASS = 20;

type Cursor = DuePage['after'];

// "Accepted means done": an open record whose job BullMQ no longer holds gets it again. A page is locked while
// checked (SKIP LOCKED: workers split it, and no job finishes its row meanwhile); a cursor per source moves on
// through a backlog in hand, and a pass goes on while it finds lost jobs, so a large loss is recovered at full speed.
@Injectable()
export class LostJobSweepService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LostJobSweepService.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  private readonly sources: readonly SweepSource[];
  private readonly cursors = new Map<string, Cursor>();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly lostJobs: LostJobRequeue,
    catalog: JobCatalog,
    private readonly config: AppConfig,
  ) {
    this.sources = catalog.sweeps;
  }

  onApplicationBootstrap(): void {
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

  /** Before the queues close, as the relay stops (OutboxRelayService). */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

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
    let requeued = 0;
    for (let idle = 0; idle < IDLE_PAGES_PER_PASS;) {
      const cursor = this.cursors.get(source.name) ?? null;
      const page = await this.transactions.run((manager) => this.sweepPage(manager, source, batchSize, cursor));
      requeued += page.lost;
      this.cursors.set(source.name, page.rows < batchSize ? null : page.last);
      if (page.rows < batchSize) break;
      if (!page.lost) idle++;
    }
    return requeued;
  }

  private async sweepPage(
    manager: EntityManager,
    source: SweepSource,
    batchSize: number,
    cursor: Cursor,
  ): Promise<{ rows: number; lost: number; last: Cursor }> {
    const due = await preparedQuery(
      manager,
      source.due({ olderThanMs: this.config.jobs.sweepIntervalMs, limit: batchSize, after: cursor }),
    );
    if (!due.length) return { rows: 0, lost: 0, last: null };
    const last = { dueAt: due[due.length - 1].dueAt, id: String(due[due.length - 1].id) };
    const jobs = jobsOf(source, due);
    // A job still waiting in the outbox belongs to the relay, not to the sweep.
    const staged = await preparedQuery<Pick<OutboxEntity, 'jobId'>>(
      manager,
      outboxQueries.stagedJobIds(jobs.map((job) => job.jobId)),
    );
    const inOutbox = new Set(staged.map((r) => r.jobId));
    const candidates = jobs.filter((job) => !inOutbox.has(job.jobId));
    const taken = await Promise.all(candidates.map((job) => this.lostJobs.takeBackIfLost(job)));
    const lost = await this.lostJobs.requeue(candidates.filter((_, i) => taken[i]));
    return { rows: due.length, lost, last };
  }
}

/** Rows of one job (a batch's) are checked and requeued once. */
function jobsOf(source: SweepSource, rows: DueRow[]): StagedJob[] {
  const batches = new Map<string | DueRow, [DueRow, ...DueRow[]]>();
  for (const row of rows) {
    const key = source.batchOf?.(row) ?? row;
    const batch = batches.get(key);
    if (batch) batch.push(row);
    else batches.set(key, [row]);
  }
  const byId = new Map<string, StagedJob>();
  for (const batch of batches.values()) {
    const job = source.job(batch);
    if (!byId.has(job.jobId)) byId.set(job.jobId, job);
  }
  return [...byId.values()];
}
