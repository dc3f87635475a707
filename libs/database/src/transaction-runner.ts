import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery } from './prepared-query';

// Behind a transaction-mode pooler the statement timeout cannot ride on the connection (start-up parameters are
// refused, the server connection changes), so each transaction sets it for itself.
@Injectable()
export class TransactionRunner {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      if (this.config.databaseTransactionPooler)
        await preparedQuery(manager, `SELECT set_config('statement_timeout', $1, true)`, [
          String(this.config.databaseStatementTimeoutMs),
        ]);
      return work(manager);
    });
  }
}
