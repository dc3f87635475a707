import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { describe } from '@app/errors';
import { OutboxService, TransactionService, Tx } from '@app/outbox';
import { jobIds, JobName, QueueName } from '@app/queues';

/** Job states in which BullMQ will still run the job by itself. */
const IN_HAND = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** An open record; `attempts` for the sources whose job id counts them. */
interface DueRow {
  id: number | string;
  accountId: number;
  attempts?: number;
}

/** Records that must still get their job done, and how to give them a job again. */
interface SweepSource {
  name: string;
  queue: QueueName;
  /** Rows still open although their work was due more than one sweep interval ago. */
  dueSql: string;
  jobId(row: DueRow): string;
  enqueue(tx: Tx, row: DueRow): void;
}

const SOURCES: SweepSource[] = [
  {
    name: 'orders',
    queue: QueueName.Fulfilment,
    dueSql: `SELECT id, account_id AS "accountId" FROM orders
       WHERE NOT complete
         AND coalesce(ship_date, created_at) < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY coalesce(ship_date, created_at), id LIMIT $2`,
    jobId: (row) => jobIds.fulfilment(Number(row.id)),
    enqueue: (tx, row) =>
      tx.enqueue(
        JobName.FulfilOrder,
        { accountId: row.accountId, orderId: Number(row.id) },
        jobIds.fulfilment(Number(row.id)),
      ),
  },
  {
    name: 'messages',
    queue: QueueName.Messages,
    dueSql: `SELECT id, account_id AS "accountId" FROM messages
       WHERE status IN ('queued', 'processing')
         AND created_at < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY id LIMIT $2`,
    jobId: (row) => jobIds.message(String(row.id)),
    enqueue: (tx, row) =>
      tx.enqueue(
        JobName.ProcessMessage,
        { accountId: row.accountId, messageId: String(row.id) },
        jobIds.message(String(row.id)),
      ),
  },
  {
    name: 'events',
    queue: QueueName.Events,
    dueSql: `SELECT id, account_id AS "accountId" FROM events
       WHERE NOT fanned_out
         AND created_at < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY id LIMIT $2`,
    jobId: (row) => jobIds.fanOut(Number(row.id)),
    enqueue: (tx, row) =>
      tx.enqueue(
        JobName.FanOutEvent,
        { accountId: row.accountId, eventId: Number(row.id) },
        jobIds.fanOut(Number(row.id)),
      ),
  },
  {
    // A pending delivery's job is the one for its next attempt; it is due at next_attempt_at.
    name: 'webhook deliveries',
    queue: QueueName.Webhooks,
    dueSql: `SELECT id, account_id AS "accountId", attempts FROM webhook_deliveries
       WHERE status = 'pending'
         AND coalesce(next_attempt_at, created_at) < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY id LIMIT $2`,
    jobId: (row) => jobIds.delivery(Number(row.id), row.attempts ?? 0),
    enqueue: (tx, row) =>
      tx.enqueue(
        JobName.DeliverWebhook,
        { accountId: row.accountId, deliveryId: Number(row.id), attempt: row.attempts ?? 0 },
        jobIds.delivery(Number(row.id), row.attempts ?? 0),
      ),
  },
];

/**
 * The safety net behind "accepted means done": an open order, an unprocessed message, an
 * event not yet fanned out or a pending webhook delivery whose job BullMQ no longer holds (Redis flushed, enqueue lost,
 * retries spent while Postgres was down) gets its job again. Job ids are deterministic and processors idempotent, so several
 * workers sweeping at once, or a job that reappears from the outbox, still do the work once.
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
    // A job still waiting in the outbox belongs to the relay, not to the sweep.
    const staged: { job_id: string }[] = await this.dataSource.query(
      'SELECT job_id FROM outbox WHERE job_id = ANY($1::text[])',
      [due.map((row) => source.jobId(row))],
    );
    const inOutbox = new Set(staged.map((r) => r.job_id));
    const queue = this.outbox.queue(source.queue);
    const lost: typeof due = [];
    for (const row of due) {
      const jobId = source.jobId(row);
      if (inOutbox.has(jobId)) continue;
      const state = await queue.getJobState(jobId);
      if (IN_HAND.has(state)) continue;
      // A finished job (failed for good) would make re-adding the same id a no-op.
      if (state !== 'unknown') await queue.remove(jobId);
      lost.push(row);
    }
    if (!lost.length) return 0;
    await this.transactions.run(async (tx) => {
      for (const row of lost) source.enqueue(tx, row);
    });
    return lost.length;
  }
}
