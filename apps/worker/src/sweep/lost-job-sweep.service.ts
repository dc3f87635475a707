import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { describe } from '@app/errors';
import { OutboxService, TransactionService } from '@app/outbox';
import { JOB_QUEUE, jobIds, JobName, StagedJob } from '@app/queues';

/** Job states in which BullMQ will still run the job by itself. */
const IN_HAND = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** An open record; `attempts` for the sources whose job id counts them. */
interface DueRow {
  id: number | string;
  accountId: number;
  attempts?: number;
}

/** Records that must still get their job done, and the job that does it (with its first id). */
interface SweepSource {
  name: string;
  /** Rows still open although their work was due more than one sweep interval ago. */
  dueSql: string;
  job(row: DueRow): StagedJob;
}

const SOURCES: SweepSource[] = [
  {
    name: 'orders',
    dueSql: `SELECT id, account_id AS "accountId" FROM orders
       WHERE NOT complete
         AND coalesce(ship_date, created_at) < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY coalesce(ship_date, created_at), id LIMIT $2`,
    job: (row) => ({
      name: JobName.FulfilOrder,
      payload: { accountId: row.accountId, orderId: Number(row.id) },
      jobId: jobIds.fulfilment(Number(row.id)),
    }),
  },
  {
    name: 'messages',
    dueSql: `SELECT id, account_id AS "accountId" FROM messages
       WHERE status IN ('queued', 'processing')
         AND created_at < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY id LIMIT $2`,
    job: (row) => ({
      name: JobName.ProcessMessage,
      payload: { accountId: row.accountId, messageId: String(row.id) },
      jobId: jobIds.message(String(row.id)),
    }),
  },
  {
    name: 'events',
    dueSql: `SELECT id, account_id AS "accountId" FROM events
       WHERE NOT fanned_out
         AND created_at < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY id LIMIT $2`,
    job: (row) => ({
      name: JobName.FanOutEvent,
      payload: { accountId: row.accountId, eventId: Number(row.id) },
      jobId: jobIds.fanOut(Number(row.id)),
    }),
  },
  {
    // A pending delivery's job is the one for its next attempt; it is due at next_attempt_at.
    name: 'webhook deliveries',
    dueSql: `SELECT id, account_id AS "accountId", attempts FROM webhook_deliveries
       WHERE status = 'pending'
         AND coalesce(next_attempt_at, created_at) < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY id LIMIT $2`,
    job: (row) => {
      const attempt = row.attempts ?? 0;
      return {
        name: JobName.DeliverWebhook,
        payload: { accountId: row.accountId, deliveryId: Number(row.id), attempt },
        jobId: jobIds.delivery(Number(row.id), attempt),
      };
    },
  },
];

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

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly transactions: TransactionService,
    private readonly config: AppConfig,
  ) {}

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

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass over every source; returns how many records got their job back, by source. */
  async sweepOnce(batchSize = 500): Promise<Record<string, number>> {
    const requeued: Record<string, number> = {};
    for (const source of SOURCES) requeued[source.name] = await this.sweep(source, batchSize);
    return requeued;
  }

  private async sweep(source: SweepSource, batchSize: number): Promise<number> {
    const due: DueRow[] = await this.dataSource.query(source.dueSql, [this.config.jobs.sweepIntervalMs, batchSize]);
    if (!due.length) return 0;
    const jobs = due.map((row) => source.job(row));
    // A job still waiting in the outbox belongs to the relay, not to the sweep.
    const staged: { job_id: string }[] = await this.dataSource.query(
      'SELECT job_id FROM outbox WHERE job_id = ANY($1::text[])',
      [jobs.map((job) => job.jobId)],
    );
    const inOutbox = new Set(staged.map((r) => r.job_id));
    const lost: StagedJob[] = [];
    for (const job of jobs) {
      if (inOutbox.has(job.jobId)) continue;
      const queue = this.outbox.queue(JOB_QUEUE[job.name]);
      const state = await queue.getJobState(job.jobId);
      if (IN_HAND.has(state)) continue;
      // A finished job (failed for good) would make re-adding the same id a no-op.
      if (state !== 'unknown') await queue.remove(job.jobId);
      lost.push(job);
    }
    if (!lost.length) return 0;
    await this.transactions.run(async (tx) => {
      for (const job of lost) tx.enqueue(job.name, job.payload, job.jobId);
    });
    return lost.length;
  }
}
