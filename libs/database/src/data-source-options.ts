import { types } from 'pg';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '@app/config';
import { MIGRATIONS } from './migrations';

// Ids are int64 in the interface and stay far below 2^53 here: read them as numbers, not strings.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));

export function dataSourceOptions(config: AppConfig, overrides: Partial<{ poolSize: number }> = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
    // No entities: every feature reads and writes through preparedQuery (docs/internals/architecture.md).
    entities: [],
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: overrides.poolSize ?? config.databasePoolSize,
      // Fail fast when Postgres is down so the API can answer 503 instead of hanging.
      connectionTimeoutMillis: 2_000,
      statement_timeout: 10_000,
      application_name: 'petstore',
    },
  };
}
