import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery } from '@app/database';
import { JOB_QUEUE, JobName, QueueName, StagedJob } from '@app/queues';

/** How long a request waits for the after-commit enqueue before leaving it to the relay. */
const DISPATCH_TIMEOUT_MS = 1_000;
/** How long a relay pass holds its claimed rows while Redis takes the jobs. */
const RELAY_ENQUEUE_TIMEOUT_MS = 5_000;

/** Rejects when `work` takes longer than `ms`; the work itself is not cancelled. */
function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
/**
 * Rows already enqueued are deleted in batches, one DELETE per FORGET_INTERVAL_MS (or per
 * FORGET_BATCH ids) instead of one per request: that DELETE was a second round trip and a
 * second WAL flush on every write. A row enqueued but not yet deleted is harmless: the relay
 * only takes rows older than OUTBOX_RELAY_GRACE_MS, and re-enqueueing one is a no-op (job ids
 * are deterministic).
 */
const FORGET_INTERVAL_MS = 50;
const FORGET_BATCH = 1_000;

export interface OutboxRow {
  id: number;
  queue: string;
  job_name: string;
  job_id: string;
  payload: unknown;
  run_at: Date | null;
}

/**
 * INSERT ... RETURNING for the jobs' outbox rows, its five parameters numbered after `offset`
 * others. One array per column (unnest) rather than a VALUES tuple per job: the SQL text and
 * its parameter count are the same for one job or five hundred.
 */
function outboxInsert(jobs: StagedJob[], offset: number): { sql: string; values: unknown[] } {
  const values: unknown[][] = [[], [], [], [], []];
  for (const j of jobs) {
    [JOB_QUEUE[j.name], j.name, j.jobId, JSON.stringify(j.payload), j.runAt ?? null].forEach((v, i) =>
      values[i].push(v),
    );
  }
  const p = (i: number) => `$${offset + i}`;
  return {
    sql: `INSERT INTO outbox (queue, job_name, job_id, payload, run_at)
          SELECT * FROM unnest(${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::jsonb[], ${p(5)}::timestamptz[])
          RETURNING id, queue, job_name, job_id, payload, run_at`,
    values,
  };
}

/**
 * The transactional outbox: jobs are staged as rows inside the business transaction, then
 * pushed to BullMQ after commit (dispatch) or, if that did not happen, by the relay.
 */
@Injectable()
export class OutboxService implements OnModuleDestroy {
  private readonly logger = new Logger(OutboxService.name);
  private readonly queues: Record<QueueName, Queue>;
  private dispatched: number[] = [];
  private forgetTimer?: NodeJS.Timeout;
  private forgetting?: Promise<void>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @InjectQueue(QueueName.Messages) messages: Queue,
    @InjectQueue(QueueName.Fulfilment) fulfilment: Queue,
    @InjectQueue(QueueName.Events) events: Queue,
    @InjectQueue(QueueName.Webhooks) webhooks: Queue,
  ) {
    this.queues = {
      [QueueName.Messages]: messages,
      [QueueName.Fulfilment]: fulfilment,
      [QueueName.Events]: events,
      [QueueName.Webhooks]: webhooks,
    };
  }

  queue(name: QueueName): Queue {
    return this.queues[name];
  }

  /** Writes the jobs' rows with the caller's transaction; returns the rows to dispatch after commit. */
  async stage(manager: EntityManager, jobs: StagedJob[]): Promise<OutboxRow[]> {
    if (!jobs.length) return [];
    const { sql, values } = outboxInsert(jobs, 0);
    return preparedQuery<OutboxRow>(manager, sql, values);
  }

  /**
   * `statement` (one INSERT or UPDATE with `params`) and the jobs' outbox rows as a single SQL
   * statement: Postgres runs it atomically in autocommit, so the write and its jobs commit
   * together in one round trip instead of four (BEGIN, statement, outbox INSERT, COMMIT).
   * Returns the rows to dispatch after commit.
   */
  async stageWith(statement: string, params: unknown[], jobs: StagedJob[]): Promise<OutboxRow[]> {
    const { sql, values } = outboxInsert(jobs, params.length);
    // A data-modifying WITH runs exactly once, whether or not the main statement reads it.
    return preparedQuery<OutboxRow>(this.dataSource, `WITH written AS (${statement}) ${sql}`, [...params, ...values]);
  }

  /**
   * Best effort right after commit: enqueue, then forget the rows. A failure here only
   * delays the job until the relay's next pass; it never fails the request, and a Redis that
   * hangs (rather than refuses) delays it by DISPATCH_TIMEOUT_MS at most.
   */
  async dispatch(rows: OutboxRow[]): Promise<void> {
    if (!rows.length) return;
    try {
      await withTimeout(this.enqueue(rows), DISPATCH_TIMEOUT_MS, 'outbox dispatch');
      this.forget(rows);
    } catch (err) {
      this.logger.warn(
        { err: { message: (err as Error).message }, count: rows.length },
        'outbox dispatch deferred to relay',
      );
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearTimeout(this.forgetTimer);
    await this.forgetting;
    await this.flushForgotten();
  }

  private forget(rows: OutboxRow[]): void {
    for (const r of rows) this.dispatched.push(r.id);
    if (this.dispatched.length >= FORGET_BATCH) {
      clearTimeout(this.forgetTimer);
      this.forgetTimer = undefined;
      void this.flushForgotten();
    } else {
      this.forgetTimer ??= setTimeout(() => {
        this.forgetTimer = undefined;
        void this.flushForgotten();
      }, FORGET_INTERVAL_MS);
    }
  }

  /** Never throws: rows left behind are re-enqueued by the relay as no-ops and deleted then. */
  private async flushForgotten(): Promise<void> {
    if (!this.dispatched.length) return;
    const ids = this.dispatched;
    this.dispatched = [];
    const done = this.dataSource.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [ids]).then(
      () => undefined,
      (err: Error) =>
        this.logger.warn({ err: { message: err.message }, count: ids.length }, 'outbox cleanup deferred to relay'),
    );
    this.forgetting = done;
    await done;
  }

  /**
   * One relay pass: claims rows older than the grace period (SKIP LOCKED, so several
   * workers share the work), enqueues them and deletes them in the same transaction.
   * If Redis refuses or does not answer in time, the transaction rolls back and the rows wait
   * for the next pass (an enqueue that lands late is harmless: job ids are deterministic).
   */
  async relayOnce(batchSize = 500): Promise<number> {
    await this.assertQueuesConnected();
    return this.dataSource.transaction(async (manager) => {
      const rows: OutboxRow[] = await manager.query(
        `SELECT id, queue, job_name, job_id, payload, run_at FROM outbox
         WHERE created_at < now() - make_interval(secs => $1::double precision / 1000)
         ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [this.config.outbox.relayGraceMs, batchSize],
      );
      if (!rows.length) return 0;
      await withTimeout(this.enqueue(rows), RELAY_ENQUEUE_TIMEOUT_MS, 'outbox relay');
      await manager.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  /**
   * The worker's queue connections hold commands while Redis is away instead of failing them:
   * a pass then must not start, or every pass would pile another batch into that buffer and
   * keep its rows locked until Redis returns.
   */
  private async assertQueuesConnected(): Promise<void> {
    const clients = await withTimeout(
      Promise.all(Object.values(this.queues).map((q) => q.client)),
      RELAY_ENQUEUE_TIMEOUT_MS,
      'queue connection',
    );
    if (clients.some((c) => c.status !== 'ready')) throw new Error('Redis is not connected');
  }

  private async enqueue(rows: OutboxRow[]): Promise<void> {
    const byQueue = new Map<string, OutboxRow[]>();
    for (const r of rows) byQueue.set(r.queue, [...(byQueue.get(r.queue) ?? []), r]);
    const { attempts, backoffMs } = this.config.jobs;
    const job = (r: OutboxRow) => ({
      name: r.job_name as JobName,
      data: r.payload,
      opts: {
        jobId: r.job_id,
        delay: r.run_at ? Math.max(0, new Date(r.run_at).getTime() - Date.now()) : undefined,
        attempts,
        backoff: { type: 'exponential', delay: backoffMs },
        removeOnComplete: { age: 3600, count: 10_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    });
    await Promise.all(
      [...byQueue].map(([queue, list]) => {
        const q = this.queues[queue as QueueName];
        // A single job (most requests) skips addBulk's MULTI: building an ioredis pipeline over
        // BullMQ's scripts cost more CPU than the enqueue itself.
        if (list.length === 1) {
          const { name, data, opts } = job(list[0]);
          return q.add(name, data, opts);
        }
        return q.addBulk(list.map(job));
      }),
    );
  }
}
