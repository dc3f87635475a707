// globalSetup runs outside jest's module mapper: resolve the @app/* aliases from tsconfig.
import 'tsconfig-paths/register';
import './env';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@app/config';
import { recreateDatabase } from '../support/own-stores';
import { REDIS_PID_DIR } from './file-stores-paths';

/** The migrated template every test file's database is copied from (test/setup/file-stores.ts). */
export default async function globalSetup(): Promise<void> {
  const config = loadConfig();
  // The log file holds this run only: the security tests scan all of it for leaked keys.
  if (config.logFile) rmSync(config.logFile, { force: true });
  stopLeftoverRedisServers();
  await recreateDatabase(config.databaseUrl);
}

/** redis-servers a run that crashed left behind (only those test files started). */
function stopLeftoverRedisServers(): void {
  if (!existsSync(REDIS_PID_DIR)) return;
  for (const file of readdirSync(REDIS_PID_DIR)) {
    const pid = Number(readFileSync(join(REDIS_PID_DIR, file), 'utf8'));
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('redis-server')) process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(join(REDIS_PID_DIR, file), { force: true });
  }
}
