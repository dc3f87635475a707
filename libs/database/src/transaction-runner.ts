import { Injectable } from '@nestjs/common';
import { PoolClient } from 'pg';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { AppConfig } from '@app/config';

/** A transaction that begins when its manager is first touched: work that never touches it costs no BEGIN. */
export interface LazyTransaction {
  readonly manager: EntityManager;
  readonly begun: boolean;
  /** A no-op if never begun; releases the connection even when COMMIT fails. */
  commit(): Promise<void>;
  /** Never throws; a no-op if never begun or already ended. */
  rollback(): Promise<void>;
}

// Behind a transaction-mode pooler the statement timeout cannot ride on the connection (start-up parameters are
// refused, the server connection changes), so each transaction sets it for itself.
@Injectable()
export class TransactionRunner {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const transaction = this.lazy();
    let value: T;
    try {
      value = await work(transaction.manager);
    } catch (err) {
      await transaction.rollback();
      throw err;
    }
    await transaction.commit();
    return value;
  }

  lazy(): LazyTransaction {
    return new LazyPgTransaction(this.dataSource, this.config);
  }
}

/** One object per unit of work, not a set of closures: most units (a group commit's) never begin. */
class LazyPgTransaction implements LazyTransaction {
  private runner?: QueryRunner;
  private began?: Promise<PoolClient>;
  private ended = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  get manager(): EntityManager {
    if (!this.runner) {
      const opened = this.dataSource.createQueryRunner();
      // The first to see the runner's connection, so BEGIN is queued on it before any statement (transaction-runner.spec.ts).
      const began = (opened.connect() as Promise<PoolClient>).then((c) => this.begin(c));
      began.catch(() => undefined);
      [this.runner, this.began] = [opened, began];
    }
    return this.runner.manager;
  }

  get begun(): boolean {
    return this.runner !== undefined;
  }

  commit(): Promise<void> {
    return this.end('COMMIT');
  }

  rollback(): Promise<void> {
    return this.end('ROLLBACK').catch(() => undefined);
  }

  // Both queued at once (pg runs a client's queries in order): a statement queued later runs after them.
  private async begin(client: PoolClient): Promise<PoolClient> {
    const statements = [client.query('BEGIN')];
    if (this.config.databaseTransactionPooler)
      statements.push(
        client.query(`SELECT set_config('statement_timeout', $1, true)`, [
          String(this.config.databaseStatementTimeoutMs),
        ]),
      );
    await Promise.all(statements);
    return client;
  }

  private async end(statement: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (!this.runner || this.ended) return;
    this.ended = true;
    try {
      await (await this.began!).query(statement);
    } finally {
      await this.runner.release();
    }
  }
}
