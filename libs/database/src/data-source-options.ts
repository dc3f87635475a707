import { types } from 'pg';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '@app/config';
import { MIGRATIONS } from './migrations';
import { withBcTimestamps } from './bc-timestamps';
import { PrimaryLocator } from './primary-locator';
import { recordingDriver } from './statement-pool';

// Ids are int64 in the interface and stay far below 2^53 here: read them as numbers, not strings.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));
// Date-times from year 0000 are valid input (RFC 3339); postgres-date misreads Feb 29 of that year (bc-timestamps.ts).
types.setTypeParser(types.builtins.TIMESTAMPTZ, withBcTimestamps(types.getTypeParser(types.builtins.TIMESTAMPTZ)));

export type PoolRole = 'api' | 'worker' | 'cli';

const POOL_SIZE: Record<PoolRole, (config: AppConfig) => number> = {
  api: (config) => config.databasePoolSize,
  worker: (config) => config.workerDatabasePoolSize,
  cli: () => 2,
};

/** `url`: another server with the same options (a read replica). */
export function dataSourceOptions(
  config: AppConfig,
  role: PoolRole | { poolSize: number } = 'api',
  url = config.databaseUrl,
): DataSourceOptions {
  const connectionTimeoutMillis = role === 'worker' ? config.databaseStatementTimeoutMs : 2_000;
  return {
    type: 'postgres',
    url,
    driver: recordingDriver(),
    // The feature modules add their entities (DatabaseModule); entities describe, migrations change the schema.
    entities: [],
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: typeof role === 'string' ? POOL_SIZE[role](config) : role.poolSize,
      // Fail fast when Postgres is down so the API can answer 503 instead of hanging. A worker
      // has few connections for many handlers: it waits its turn rather than fail the job.
      connectionTimeoutMillis,
      // A transaction-mode pooler rejects start-up parameters: runTransaction sets it per transaction.
      ...(config.databaseTransactionPooler ? {} : { statement_timeout: config.databaseStatementTimeoutMs }),
      application_name: 'petstore',
      // Several servers in DATABASE_URL: each new connection goes to the one taking writes now. One server: pg's own Client.
      ...(url === config.databaseUrl && config.databaseHosts.length > 1
        ? { Client: PrimaryLocator.for(url, config.databaseHosts).Client }
        : {}),
    },
  };
}
