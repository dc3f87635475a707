// globalSetup runs outside jest's module mapper: resolve the @app/* aliases from tsconfig.
import 'tsconfig-paths/register';
import './env';
import { rmSync } from 'node:fs';
import { Client } from 'pg';
import Redis from 'ioredis';
import { loadConfig } from '@app/config';
import { migrate } from '@app/database';

/** A fresh test database (dropped, created, migrated) and an empty Redis db index per run. */
export default async function globalSetup(): Promise<void> {
  const config = loadConfig();
  // The log file holds this run only: the security tests scan all of it for leaked keys.
  if (config.logFile) rmSync(config.logFile, { force: true });
  const url = new URL(config.databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
  await migrate(config);
  const redis = new Redis(config.redisUrl);
  await redis.flushdb();
  redis.disconnect();
}
