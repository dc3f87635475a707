import * as pg from 'pg';
import { DataSource } from 'typeorm';

/** pg as TypeORM's `driver` option, keeping the pool TypeORM makes so a statement outside a transaction goes straight to it. */
export interface RecordingDriver {
  readonly Pool: typeof pg.Pool;
  pool?: pg.Pool;
}

// TypeORM's documented `driver` option (default `require('pg')`), so a read outside a transaction needs no query
// runner of its own (docs/internals/decisions/0057-statements-on-the-pool.md).
export function recordingDriver(): RecordingDriver {
  const driver: RecordingDriver = {
    ...pg,
    Pool: class RecordedPool extends pg.Pool {
      constructor(options?: pg.PoolConfig) {
        super(options);
        driver.pool = this;
      }
    },
  };
  return driver;
}

/** The pool a data source built with dataSourceOptions() holds, once initialised. */
export function statementPool(dataSource: DataSource): pg.Pool {
  const pool = (dataSource.options as { driver?: RecordingDriver }).driver?.pool;
  if (!pool)
    throw new Error('statementPool: the data source was not made by dataSourceOptions(), or is not initialised');
  return pool;
}
