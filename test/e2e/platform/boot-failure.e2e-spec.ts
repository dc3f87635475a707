import Redis from 'ioredis';
import { eventually } from '../../support/http';
import { startApi, startWorker } from '../../support/test-apps';

/** Connections the file's redis-server holds (CLIENT LIST: one line each, the probe's own included). */
const connections = async (redis: Redis) => ((await redis.client('LIST')) as string).trim().split('\n').length;

/**
 * An app whose boot fails closes what it had opened: its Redis clients, left connected, reconnect for
 * ever once the file's redis-server stops, and Jest's process never exits.
 */
describe('an app whose boot fails', () => {
  const missingDatabase = new URL(process.env.DATABASE_URL!);
  missingDatabase.pathname += '_missing';
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  afterAll(() => redis.quit());

  it.each([
    ['API', startApi],
    ['worker', startWorker],
  ])('the %s leaves no Redis connection open', async (_, start) => {
    const before = await connections(redis);
    await expect(start({ DATABASE_URL: missingDatabase.toString() })).rejects.toThrow(/does not exist/);
    await eventually(async () => (await connections(redis)) === before, 5_000);
  });
});
