import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { LazyTransaction, Sql, TransactionRunner } from '@app/database';
import { currentTraceparent, withSpan } from '@app/observability';
import { JobDefinition, StagedJob, stagedJob, StageOptions } from './job-definition';
import { OutboxDispatch } from './outbox-dispatch.service';
import { OutboxRow } from './jobs.queries';
import { OutboxStaging } from './outbox-staging.service';

export interface UnitOfWorkTx {
  /** Touching it begins a transaction; a work that never does commits as one statement, in one round trip. */
  readonly manager: EntityManager;
  /** The job continues `options.traceparent` if given, else the active trace. */
  enqueue<P extends object>(job: JobDefinition<P>, payload: P, options?: StageOptions): void;
  /** A write nothing in the work reads back: sent at commit, in order, in one statement with the outbox rows. */
  write(statement: Sql): void;
}

/** What another library adds to a unit (libs/events: domain events) without this one knowing it. */
export interface UnitOfWorkExtension<X extends object> {
  /** `members` join the work's tx; `afterCommit` runs once the unit has committed, before its jobs are dispatched. */
  open(tx: UnitOfWorkTx): { members: X; afterCommit(): void };
}

/** Every write, its jobs and what extensions add commit together; the jobs are dispatched to BullMQ after commit. */
@Injectable()
export class UnitOfWork {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRunner,
    private readonly staging: OutboxStaging,
    private readonly dispatcher: OutboxDispatch,
  ) {}

  run<T>(work: (tx: UnitOfWorkTx) => Promise<T>): Promise<T>;
  run<T, X extends object>(work: (tx: UnitOfWorkTx & X) => Promise<T>, extension: UnitOfWorkExtension<X>): Promise<T>;
  async run<T, X extends object>(
    work: (tx: UnitOfWorkTx & X) => Promise<T>,
    extension?: UnitOfWorkExtension<X>,
  ): Promise<T> {
    const transaction = this.transactions.lazy();
    const tx = new UnitTx(transaction);
    const opened = extension?.open(tx);
    let value: T;
    let rows: OutboxRow[];
    try {
      value = await work(Object.assign(tx, opened?.members) as UnitOfWorkTx & X);
      rows = await this.stage(transaction, tx.writes, tx.jobs);
    } catch (err) {
      await transaction.rollback();
      throw err;
    }
    await transaction.commit();
    opened?.afterCommit();
    await this.dispatcher.dispatch(rows);
    return value;
  }

  private stage(transaction: LazyTransaction, writes: Sql[], jobs: StagedJob[]): Promise<OutboxRow[]> {
    const db = transaction.begun ? transaction.manager : this.dataSource;
    const stage = () => this.staging.stage(db, writes, jobs);
    return jobs.length
      ? withSpan('outbox write', 'internal', { 'messaging.batch.message_count': jobs.length }, stage)
      : stage();
  }
}

/** One object per unit, its methods on the prototype: a group commit opens a unit per batch. */
class UnitTx implements UnitOfWorkTx {
  readonly writes: Sql[] = [];
  readonly jobs: StagedJob[] = [];

  constructor(private readonly transaction: LazyTransaction) {}

  get manager(): EntityManager {
    return this.transaction.manager;
  }

  enqueue<P extends object>(job: JobDefinition<P>, payload: P, options: StageOptions = {}): void {
    this.jobs.push(stagedJob(job, payload, { ...options, traceparent: options.traceparent ?? currentTraceparent() }));
  }

  write(statement: Sql): void {
    this.writes.push(statement);
  }
}
