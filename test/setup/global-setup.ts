// globalSetup runs outside jest's module mapper: resolve the @app/* aliases from tsconfig.
import 'tsconfig-paths/register';
import './env';
import { rmSync } from 'node:fs';
import Redis from 'ioredis';
import { loadConfig } from '@app/config';
import { recreateDatabase } from '../support/own-stores';

/** A fresh test database (dropped, created, migrated) and an empty Redis db index per run. */
export default async function globalSetup(): Promise<void> {
  const config = loadConfig();
  // The log file holds this run only: the security tests scan all of it for leaked keys.
  if (config.logFile) rmSync(config.logFile, { force: true });
  await recreateDatabase(config.databaseUrl);
  const redis = new Redis(config.redisUrl);
  await redis.flushdb();
  redis.disconnect();
}
