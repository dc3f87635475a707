import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import Redis from 'ioredis';
import { Client, Pool } from 'pg';

// Bench settings, not app configuration: the bench empties these at will.
export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/petstore_bench';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/7';

/**
 * What every bench's API and worker start with: production mode, the bench's stores, no demo data, a /metrics port
 * of their own, fresh keys (production refuses to start without them; the bench's webhooks and keys die with it).
 */
export function benchEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL,
    REDIS_URL,
    LOG_LEVEL: 'info',
    DEMO_SEED: 'false',
    METRICS_PORT: '0',
    WEBHOOK_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    API_KEY_TAG_KEYS: `b1:${randomBytes(32).toString('base64')}`,
    ...extra,
  };
}

// Left on what the bench created: a mistyped URL must not wipe other data.
export const BENCH_MARKER = 'petstore-bench: created by npm run bench, dropped and re-created by each run';
export const REDIS_MARKER_KEY = 'petstore-bench:owner';

export class BenchStoreRefused extends Error {}

// The limiter never refuses during the bench, but still runs on every request.
const LIMIT_PER_MINUTE = 100_000_000;
const LIMIT_PER_DAY = 1_000_000_000;

export interface BenchAccount {
  accountId: number;
  apiKey: string;
}

/** Migrates with the real CLI. */
export async function freshStores(env: Record<string, string>): Promise<void> {
  await claimDatabase(DATABASE_URL);
  execFileSync(process.execPath, ['dist/apps/cli/src/main.js', 'migrate'], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  await flushRedis();
}

/** Refuses a database that exists without the bench's marker. */
export async function claimDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new BenchStoreRefused(`unsupported bench database name '${name}'`);
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ comment: string | null }>(
      `SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
      [name],
    );
    if (rows.length && rows[0].comment !== BENCH_MARKER)
      throw new BenchStoreRefused(
        `database '${name}' exists and was not created by the bench: not dropping it. ` +
          'Set BENCH_DATABASE_URL to a database that does not exist yet, or drop this one yourself if it is yours to drop.',
      );
    if (rows.length) await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.query(`COMMENT ON DATABASE "${name}" IS '${BENCH_MARKER}'`);
  } finally {
    await admin.end();
  }
}

/** Never FLUSHALL (the server is shared); the index must be empty or carry the marker. */
export async function flushRedis(redisUrl = REDIS_URL): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const [keys, marker] = await Promise.all([redis.dbsize(), redis.get(REDIS_MARKER_KEY)]);
    if (keys > 0 && marker !== BENCH_MARKER)
      throw new BenchStoreRefused(
        `Redis db ${new URL(redisUrl).pathname.slice(1) || 0} holds ${keys} keys and was not claimed by the bench: ` +
          'not flushing it. Set BENCH_REDIS_URL to an empty Redis db, or empty this one yourself if it is yours to empty.',
      );
    await redis.multi().flushdb().set(REDIS_MARKER_KEY, BENCH_MARKER).exec();
  } finally {
    redis.disconnect();
  }
}

/** An app's built entry in `checkout`: dist/apps/<app>/src/main.js (tsc), or dist/apps/<app>/main.js in builds before it (webpack). */
export function builtEntry(app: 'api' | 'worker' | 'cli', checkout = '.'): string {
  const tsc = resolve(checkout, 'dist', 'apps', app, 'src', 'main.js');
  return existsSync(tsc) ? tsc : resolve(checkout, 'dist', 'apps', app, 'main.js');
}

/** `checkout` for --against: the older build's key format, which this build also accepts. */
export function createAccount(name: string, env: Record<string, string>, checkout = '.'): BenchAccount {
  const out = execFileSync(
    process.execPath,
    [
      builtEntry('cli', checkout),
      'account:create',
      '--name',
      name,
      '--plan',
      'enterprise',
      '--limit-minute',
      String(LIMIT_PER_MINUTE),
      '--limit-day',
      String(LIMIT_PER_DAY),
      '--json',
    ],
    { env: { ...process.env, ...env }, encoding: 'utf8', cwd: checkout },
  );
  const { accountId, apiKey } = JSON.parse(out.trim().split('\n').pop() as string);
  return { accountId, apiKey };
}

/** One INSERT ... SELECT; returns the pet ids in order. */
export async function seedPets(pool: Pool, accountId: number, count: number, stock: number): Promise<number[]> {
  const {
    rows: [category],
  } = await pool.query(`INSERT INTO categories (account_id, name) VALUES ($1, 'bench-' || $2::text) RETURNING id`, [
    accountId,
    `${count}-${stock}`,
  ]);
  const { rows } = await pool.query(
    `INSERT INTO pets (account_id, category_id, name, status, stock)
     SELECT $1, $2, 'pet ' || g, 'available', $4 FROM generate_series(1, $3::int) g
     RETURNING id`,
    [accountId, category.id, count, stock],
  );
  await pool.query('ANALYZE pets');
  return rows.map((r: { id: string | number }) => Number(r.id)).sort((a, b) => a - b);
}
