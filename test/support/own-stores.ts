import { ChildProcess, spawn } from 'node:child_process';
import Redis from 'ioredis';
import { Client } from 'pg';
import { loadConfig } from '@app/config';
import { maintenanceUrl, migrate } from '@app/database';
import { freePort } from './free-port';

/** A redis-server of the machine's on a free loopback port, nothing saved; `extraArgs` add settings. */
export async function startRedisServer(extraArgs: string[] = []): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}/0`;
  const probe = new Redis(url, { retryStrategy: (n) => (n < 50 ? 100 : null) });
  try {
    await probe.ping();
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    probe.disconnect();
  }
  return { url, stop: () => child.kill('SIGKILL') };
}

/** Drops the database `databaseUrl` names, if it exists, whoever is connected to it. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new Client({ connectionString: maintenanceUrl(databaseUrl) });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** A test database made afresh: dropped, created and migrated. */
export async function recreateDatabase(databaseUrl: string): Promise<void> {
  await dropDatabase(databaseUrl);
  await migrate(loadConfig({ ...process.env, DATABASE_URL: databaseUrl }));
}

/**
 * A migrated Postgres database (on the shared server) and a Redis server of one test file's
 * own, for tests that count what the lost-job sweep gives back. The shared test database holds
 * records other files left open with their jobs in a Redis since stopped (the Redis Cluster
 * test's webhook deliveries retry minutes later): any file's sweep gives those back when they
 * fall due, and CI's counts were off by 53 to 113 that way.
 */
export class OwnStores {
  private constructor(
    readonly env: { DATABASE_URL: string; REDIS_URL: string },
    private readonly redis: { stop(): void },
  ) {}

  /** `name` ends the database's name, after the shared test database's. */
  static async start(name: string): Promise<OwnStores> {
    const shared = new URL(loadConfig().databaseUrl);
    const database = `${shared.pathname.slice(1)}_${name}`;
    shared.pathname = `/${database}`;
    const databaseUrl = shared.toString();
    await recreateDatabase(databaseUrl);
    const redis = await startRedisServer();
    return new OwnStores({ DATABASE_URL: databaseUrl, REDIS_URL: redis.url }, redis);
  }

  async stop(): Promise<void> {
    this.redis.stop();
    await dropDatabase(this.env.DATABASE_URL);
  }
}
