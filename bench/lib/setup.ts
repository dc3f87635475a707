import { execFileSync } from 'node:child_process';
import Redis from 'ioredis';
import { Client, Pool } from 'pg';

/** The bench owns this database and this Redis index, nothing else. */
export const DB_NAME = 'petstore_bench';
export const REDIS_DB = 7;
export const DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${DB_NAME}`;
export const REDIS_URL = `redis://127.0.0.1:6379/${REDIS_DB}`;

/** High enough that the limiter never refuses during the bench; it still runs on every request. */
const LIMIT_PER_MINUTE = 100_000_000;
const LIMIT_PER_DAY = 1_000_000_000;

export interface BenchAccount {
  accountId: number;
  apiKey: string;
}

/** Drops and re-creates the bench database, migrates it with the real CLI and empties Redis db 7. */
export async function freshStores(env: Record<string, string>): Promise<void> {
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  execFileSync(process.execPath, ['dist/apps/cli/main.js', 'migrate'], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  await flushRedis();
}

/** FLUSHDB on the bench's own index (never FLUSHALL: the server is shared). */
export async function flushRedis(): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    await redis.flushdb();
  } finally {
    redis.disconnect();
  }
}

/** An enterprise account and its read+write key, made with the operator CLI. */
export function createAccount(name: string, env: Record<string, string>): BenchAccount {
  const out = execFileSync(
    process.execPath,
    [
      'dist/apps/cli/main.js',
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
    { env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  const { accountId, apiKey } = JSON.parse(out.trim().split('\n').pop() as string);
  return { accountId, apiKey };
}

/** One category and `count` pets for an account in one INSERT ... SELECT; returns the pet ids in order. */
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
