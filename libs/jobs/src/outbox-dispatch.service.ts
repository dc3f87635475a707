import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { preparedQuery } from '@app/database';
import { withSpan } from '@app/observability';
import { within } from './within';
import { JobEnqueuer } from './job-enqueuer.service';
import { outboxQueries, OutboxRow } from './jobs.queries';
import { RedisMemoryWatch } from './redis-memory-watch.service';

/** How long a request waits for the after-commit enqueue before leaving it to the relay. */
const DISPATCH_TIMEOUT_MS = 1_000;

// Enqueued rows are deleted in batches, not per request (a round trip and a WAL flush each); one not yet deleted
// is harmless: the relay takes rows older than OUTBOX_RELAY_GRACE_MS only, and re-enqueueing is a no-op.
const FORGET_INTERVAL_MS = 50;
const FORGET_BATCH = 1_000;

@Injectable()
export class OutboxDispatch implements OnModuleDestroy {
  private readonly logger = new Logger(OutboxDispatch.name);
  private dispatched: number[] = [];
  private forgetTimer?: NodeJS.Timeout;
  private forgetting?: Promise<void>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly enqueuer: JobEnqueuer,
    private readonly redisMemory: RedisMemoryWatch,
  ) {}

  /** Best effort: a failure only delays the job until the relay's next pass, never fails the request. */
  async dispatch(rows: OutboxRow[]): Promise<void> {
    if (!rows.length || this.redisMemory.full) return;
    try {
      await withSpan('outbox enqueue', 'producer', { 'messaging.batch.message_count': rows.length }, () =>
        within(this.enqueuer.enqueue(rows), DISPATCH_TIMEOUT_MS, 'outbox dispatch'),
      );
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
    const done = preparedQuery(this.dataSource, outboxQueries.delete(ids)).then(
      () => undefined,
      (err: Error) =>
        this.logger.warn({ err: { message: err.message }, count: ids.length }, 'outbox cleanup deferred to relay'),
    );
    this.forgetting = done;
    await done;
  }
}
