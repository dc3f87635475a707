import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery, TransactionRunner } from '@app/database';
import { within, withSpan } from '@app/observability';
import { infoOfEachMaster, REDIS, RedisClient } from '@app/redis';
import { JobDefinition, StagedJob } from './job-definition';
import { QueueName } from './queue-names';

/** How long a request waits for the after-commit enqueue before leaving it to the relay. */
const DISPATCH_TIMEOUT_MS = 1_000;
/** How long a relay pass holds its claimed rows while Redis takes the jobs. */
const RELAY_ENQUEUE_TIMEOUT_MS = 5_000;

/**
 * Rows already enqueued are deleted in batches, one DELETE per FORGET_INTERVAL_MS (or per
 * FORGET_BATCH ids) instead of one per request: that DELETE was a second round trip and a
 * second WAL flush on every write. A row enqueued but not yet deleted is harmless: the relay
 * only takes rows older than OUTBOX_RELAY_GRACE_MS, and re-enqueueing one is a no-op (job ids
 * are deterministic).
 */
const FORGET_INTERVAL_MS = 50;
const FORGET_BATCH = 1_000;

/**
 * Above this share of Redis's maxmemory no job is pushed into Redis: they wait in the outbox
 * (Postgres) until the workers have drained Redis below it. At the ceiling itself (noeviction)
 * a worker cannot even take a job (that is a write), so a Redis filled to maxmemory by
 * producers would stop every worker for good; the headroom keeps them draining.
 */
const REDIS_HIGH_WATER = 0.8;
/**
 * How often the mark is checked. A producer can push a few MB a second: checked once a second,
 * an API overshot a small Redis from 80% to 99% between two checks and the workers stalled
 * (test/faults/redis-ceiling.fault-spec.ts); ten `INFO memory` a second keep the overshoot to a few %.
 */
const REDIS_MEMORY_CHECK_MS = 100;

export interface OutboxRow {
  id: number;
  queue: string;
  job_name: string;
  job_id: string;
  payload: unknown;
  run_at: Date | null;
  traceparent: string | null;
}

const OUTBOX_COLUMNS = 'id, queue, job_name, job_id, payload, run_at, traceparent';

/**
 * INSERT ... RETURNING for the jobs' outbox rows, its six parameters numbered after `offset`
 * others. One array per column (unnest) rather than a VALUES tuple per job: the SQL text and
 * its parameter count are the same for one job or five hundred.
 */
function outboxInsert(jobs: StagedJob[], offset: number): { sql: string; values: unknown[] } {
  const values: unknown[][] = [[], [], [], [], [], []];
  for (const j of jobs) {
    [j.queue, j.name, j.jobId, JSON.stringify(j.payload), j.runAt ?? null, j.traceparent ?? null].forEach((v, i) =>
      values[i].push(v),
    );
  }
  const p = (i: number) => `$${offset + i}`;
  return {
    sql: `INSERT INTO outbox (queue, job_name, job_id, payload, run_at, traceparent)
          SELECT * FROM unnest(${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::jsonb[], ${p(5)}::timestamptz[], ${p(6)}::text[])
          RETURNING ${OUTBOX_COLUMNS}`,
    values,
  };
}

/**
 * The transactional outbox: jobs are staged as rows inside the business transaction, then
 * pushed to BullMQ after commit (dispatch) or, if that did not happen, by the relay.
 */
@Injectable()
export class OutboxService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(OutboxService.name);
  private readonly queues: Record<QueueName, Queue>;
  private dispatched: number[] = [];
  private forgetTimer?: NodeJS.Timeout;
  private forgetting?: Promise<void>;
  private memoryTimer?: NodeJS.Timeout;
  /** Redis is above REDIS_HIGH_WATER of its maxmemory (checked every REDIS_MEMORY_CHECK_MS). */
  private redisFull = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    @InjectQueue(QueueName.Messages) messages: Queue,
    @InjectQueue(QueueName.Fulfilment) fulfilment: Queue,
    @InjectQueue(QueueName.Events) events: Queue,
    @InjectQueue(QueueName.Webhooks) webhooks: Queue,
    /** The fail-fast command client (1 s timeout): a memory check never waits for Redis to return. */
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {
    this.queues = {
      [QueueName.Messages]: messages,
      [QueueName.Fulfilment]: fulfilment,
      [QueueName.Events]: events,
      [QueueName.Webhooks]: webhooks,
    };
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
   * For the lost-job sweep: enqueues jobs straight to BullMQ, no outbox row, since their records
   * are durable and locked by the caller (a failure leaves them due for the next pass). Returns
   * how many were enqueued: none while Redis is above its high-water mark.
   */
  async requeue(jobs: StagedJob[]): Promise<number> {
    if (!jobs.length || this.redisFull) return 0;
    await this.enqueue(
      jobs.map((j) => ({
        id: 0,
        queue: j.queue,
        job_name: j.name,
        job_id: j.jobId,
        payload: j.payload,
        run_at: j.runAt ?? null,
        traceparent: j.traceparent ?? null,
      })),
    );
    return jobs.length;
  }

  /** Removes a waiting or delayed job that has become pointless (its order cancelled). */
  async discard<P extends object>(job: JobDefinition<P>, payload: P): Promise<void> {
    await this.queues[job.queue].remove(job.jobId(payload));
  }

  /**
   * For the lost-job sweep: true when BullMQ no longer holds `job` to run by itself (never had it,
   * or lost it). A job it finished for good is removed first, else re-adding its id would be a no-op.
   */
  async takeBackIfLost(job: StagedJob): Promise<boolean> {
    const queue = this.queues[job.queue];
    // Not getJobState: it looks for a waiting job with LPOS, a scan of the whole wait list, and
    // a sweep through a large backlog spent 336 µs per job on it. A job BullMQ will still run
    // (waiting, delayed, active, retrying) has no finishedOn; completed and failed for good do.
    const held = await queue.getJob(job.jobId);
    if (held && !held.finishedOn) return false;
    if (held) await queue.remove(job.jobId);
    return true;
  }

  /**
   * Best effort right after commit: enqueue, then forget the rows. A failure here only
   * delays the job until the relay's next pass; it never fails the request, and a Redis that
   * hangs (rather than refuses) delays it by DISPATCH_TIMEOUT_MS at most.
   */
  async dispatch(rows: OutboxRow[]): Promise<void> {
    if (!rows.length || this.redisFull) return;
    try {
      await withSpan('outbox enqueue', 'producer', { 'messaging.batch.message_count': rows.length }, () =>
        within(this.enqueue(rows), DISPATCH_TIMEOUT_MS, 'outbox dispatch'),
      );
      this.forget(rows);
    } catch (err) {
      this.logger.warn(
        { err: { message: (err as Error).message }, count: rows.length },
        'outbox dispatch deferred to relay',
      );
    }
  }

  onModuleInit(): void {
    // One check at a time: while Redis is away the client's promise may wait for it.
    let checking: Promise<void> | undefined;
    this.memoryTimer = setInterval(() => {
      checking ??= this.checkRedisMemory().finally(() => (checking = undefined));
    }, REDIS_MEMORY_CHECK_MS).unref();
  }

  /**
   * One `INFO memory` per check (per master on a cluster: any one full stops new jobs, since
   * the queues share no slot): cheaper than asking on every dispatch. Keeps the last answer
   * while Redis is away.
   */
  private async checkRedisMemory(): Promise<void> {
    try {
      if (this.redis.status !== 'ready') return;
      const masters = (await infoOfEachMaster(this.redis, 'memory')).map((info) => {
        const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
        return { usedMemory: field('used_memory'), maxmemory: field('maxmemory') };
      });
      const fullest = masters.find((m) => m.maxmemory > 0 && m.usedMemory > m.maxmemory * REDIS_HIGH_WATER);
      const full = fullest !== undefined;
      if (full !== this.redisFull) {
        this.logger.warn(
          fullest ?? masters[0],
          full ? 'Redis near maxmemory: new jobs wait in the outbox' : 'Redis below its high-water mark again',
        );
      }
      this.redisFull = full;
    } catch {
      // Redis away: dispatch and relay find out for themselves.
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.memoryTimer);
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
    const done = preparedQuery(this.dataSource, 'DELETE FROM outbox WHERE id = ANY($1::bigint[])', [ids]).then(
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
    // A pass pushes up to batchSize jobs at once: ask Redis first, not the last periodic check.
    await this.checkRedisMemory();
    if (this.redisFull) return 0;
    return this.transactions.run(async (manager) => {
      const rows: OutboxRow[] = await preparedQuery(
        manager,
        `SELECT ${OUTBOX_COLUMNS} FROM outbox
         WHERE created_at < now() - make_interval(secs => $1::double precision / 1000)
         ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [this.config.outbox.relayGraceMs, batchSize],
      );
      if (!rows.length) return 0;
      await within(this.enqueue(rows), RELAY_ENQUEUE_TIMEOUT_MS, 'outbox relay');
      await preparedQuery(manager, 'DELETE FROM outbox WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  /**
   * The worker's queue connections hold commands while Redis is away instead of failing them:
   * a pass then must not start, or every pass would pile another batch into that buffer and
   * keep its rows locked until Redis returns.
   */
  private async assertQueuesConnected(): Promise<void> {
    const clients = await within(
      Promise.all(Object.values(this.queues).map((q) => q.backend.client)),
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
      name: r.job_name,
      // The job carries its record's trace to the consumer span (processorProvider).
      data: r.traceparent ? { ...(r.payload as object), traceparent: r.traceparent } : r.payload,
      opts: {
        jobId: r.job_id,
        delay: r.run_at ? Math.max(0, new Date(r.run_at).getTime() - Date.now()) : undefined,
        attempts,
        backoff: { type: 'exponential', delay: backoffMs },
        // A few recent completed jobs for the dashboard, no more: each costs Redis memory (about
        // 0.9 kB), and a re-enqueued id whose job is gone runs again as a no-op (processors are idempotent).
        removeOnComplete: { age: 3600, count: 1_000 },
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
