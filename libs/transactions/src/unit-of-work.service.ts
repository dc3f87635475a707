import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { LazyTransaction, preparedQuery, Sql, TransactionRunner } from '@app/database';
import {
  DomainEventEntity,
  eventQueries,
  FanOutPendingEventsJob,
  LiveEvent,
  LiveEvents,
  NewDomainEvent,
  toPublicEvent,
} from '@app/events';
import {
  JobDefinition,
  OutboxDispatch,
  OutboxRow,
  outboxQueries,
  outboxRow,
  StagedJob,
  stagedJob,
  StageOptions,
} from '@app/jobs';
import { currentTraceparent, withSpan } from '@app/observability';

/**
 * Every write: its rows, its domain events and its jobs' outbox rows commit together; after commit the events go to
 * the live streams and the jobs to BullMQ.
 */
@Injectable()
export class UnitOfWork {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRunner,
    private readonly dispatcher: OutboxDispatch,
    private readonly live: LiveEvents,
  ) {}

  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const transaction = this.transactions.lazy();
    const tx = new Tx(transaction);
    let value: T;
    let rows: OutboxRow[];
    try {
      value = await work(tx);
      rows = await this.stage(transaction, tx.writes, tx.jobs);
    } catch (err) {
      await transaction.rollback();
      throw err;
    }
    await transaction.commit();
    // Not awaited: a request does not wait on the streams; the events are committed, and a stream resumes from them.
    if (tx.emitted.length) void this.live.publish(tx.emitted);
    await this.dispatcher.dispatch(rows);
    return value;
  }

  /** The deferred writes and the outbox rows in one statement, on the transaction if the work began one. */
  private stage(transaction: LazyTransaction, writes: Sql[], jobs: StagedJob[]): Promise<OutboxRow[]> {
    if (!writes.length && !jobs.length) return Promise.resolve([]);
    const db = transaction.begun ? transaction.manager : this.dataSource;
    const stage = async () => {
      const inserted = await preparedQuery<{ id: number }>(db, outboxQueries.insertAfter(writes, jobs));
      // Each row takes its id in the jobs' order (one nextval per row, in json_to_recordset's order): ids pair up.
      const ids = inserted.map((r) => r.id).sort((a, b) => a - b);
      return jobs.map((job, i) => outboxRow(job, ids[i]));
    };
    return jobs.length
      ? withSpan('outbox write', 'internal', { 'messaging.batch.message_count': jobs.length }, stage)
      : stage();
  }
}

/** One unit's handle, its methods on the prototype: a group commit opens a unit per batch. */
class Tx {
  readonly writes: Sql[] = [];
  readonly jobs: StagedJob[] = [];
  readonly emitted: LiveEvent[] = [];

  constructor(private readonly transaction: LazyTransaction) {}

  /** Touching it begins a transaction; a work that never does commits as one statement, in one round trip. */
  get manager(): EntityManager {
    return this.transaction.manager;
  }

  /** The job continues `options.traceparent` if given, else the active trace. */
  enqueue<P extends object>(job: JobDefinition<P>, payload: P, options: StageOptions = {}): void {
    this.jobs.push(stagedJob(job, payload, { ...options, traceparent: options.traceparent ?? currentTraceparent() }));
  }

  /** A write nothing in the work reads back: sent at commit, in order, in one statement with the outbox rows. */
  write(statement: Sql): void {
    this.writes.push(statement);
  }

  emit(event: NewDomainEvent): Promise<void> {
    return this.emitMany([event]);
  }

  /** At most one event per resource: a resource's sequence counter cannot move twice in one statement. */
  async emitMany(events: (NewDomainEvent & { traceparent?: string | null })[]): Promise<void> {
    if (!events.length) return;
    // The event's delivery continues the trace that emitted it, also when the sweep re-enqueues it.
    const traced = events.map((e) => ({ ...e, traceparent: e.traceparent ?? currentTraceparent() ?? null }));
    const rows = await preparedQuery<DomainEventEntity>(this.manager, eventQueries.record(traced));
    // One fan-out job per account takes all of its events (as it does those of other units recorded meanwhile).
    const fanOut = new Map<number, DomainEventEntity>();
    for (const row of rows) {
      this.emitted.push({ ...toPublicEvent(row), accountId: row.accountId, adminOnly: row.adminOnly });
      if (!row.fannedOut && !fanOut.has(row.accountId)) fanOut.set(row.accountId, row);
    }
    for (const row of fanOut.values())
      this.enqueue(
        FanOutPendingEventsJob,
        { accountId: row.accountId, eventId: row.id },
        { traceparent: row.traceparent },
      );
  }
}

export type { Tx };
