import Redis from 'ioredis';
import { Client } from 'pg';
import { BENCH_MARKER, BenchStoreRefused, claimDatabase, flushRedis } from '../../../bench/lib/setup';

const databaseUrl = process.env.DATABASE_URL as string;
const redisUrl = process.env.REDIS_URL as string;

async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('bench: it empties only the database and Redis db it created', () => {
  const redis = new Redis(redisUrl);
  afterAll(() => redis.disconnect());

  it('refuses to flush a Redis db that holds keys and no bench marker, and leaves the keys', async () => {
    await redis.set('not-the-bench', 'keep me');
    await expect(flushRedis(redisUrl)).rejects.toThrow(BenchStoreRefused);
    await expect(flushRedis(redisUrl)).rejects.toThrow(/holds \d+ keys and was not claimed by the bench/);
    expect(await redis.get('not-the-bench')).toBe('keep me');
  });

  it('flushes a Redis db it claimed: empty first, marked, then emptied again on the next run', async () => {
    await redis.flushdb(); // this test's own db index
    await flushRedis(redisUrl);
    await redis.set('left by a bench run', '1');
    await flushRedis(redisUrl);
    expect(await redis.keys('*')).toEqual(['petstore-bench:owner']);
  });

  it('refuses to drop an existing database without the bench marker, and leaves it', async () => {
    const name = new URL(databaseUrl).pathname.slice(1);
    await expect(claimDatabase(databaseUrl)).rejects.toThrow(
      new RegExp(`database '${name}' exists and was not created by the bench`),
    );
    expect(await query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).toHaveLength(1);
  });

  it('creates its database with the marker, and drops and re-creates it on the next run', async () => {
    const url = new URL(databaseUrl);
    const name = `${url.pathname.slice(1)}_bench`;
    url.pathname = `/${name}`;
    const oid = async () =>
      (
        await query<{ oid: number; comment: string }>(
          `SELECT oid, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
          [name],
        )
      )[0];
    try {
      await claimDatabase(url.toString());
      const first = await oid();
      expect(first.comment).toBe(BENCH_MARKER);
      await claimDatabase(url.toString());
      const second = await oid();
      expect(second.comment).toBe(BENCH_MARKER);
      expect(second.oid).not.toBe(first.oid);
    } finally {
      await query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  });
});
