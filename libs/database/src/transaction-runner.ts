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
    const { dataSource, config } = this;
    let runner: QueryRunner | undefined;
    let began: Promise<PoolClient> | undefined;
    let ended = false;
    const begin = async (client: PoolClient) => {
      await client.query('BEGIN');
      if (config.databaseTransactionPooler)
        await client.query(`SELECT set_config('statement_timeout', $1, true)`, [
          String(config.databaseStatementTimeoutMs),
        ]);
      return client;
    };
    const end = async (statement: 'COMMIT' | 'ROLLBACK') => {
      if (!runner || ended) return;
      ended = true;
      try {
        await (await began!).query(statement);
      } finally {
        await runner.release();
      }
    };
    return {
      get manager() {
        if (!runner) {
          const opened = dataSource.createQueryRunner();
          const client = (opened.connect() as Promise<PoolClient>).then(begin);
          // TypeORM takes each statement's connection from here, so it waits for BEGIN (transaction-runner.spec.ts).
          opened.connect = () => client;
          client.catch(() => undefined);
          [runner, began] = [opened, client];
        }
        return runner.manager;
      },
      get begun() {
        return runner !== undefined;
      },
      commit: () => end('COMMIT'),
      rollback: () => end('ROLLBACK').catch(() => undefined),
    };
  }
}
