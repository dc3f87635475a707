import Redis from 'ioredis';
import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { queuePrefix } from '@app/jobs';
import { MessageQueue } from '@app/messages';
import { cli } from '../../support/cli';
import { eventually, HttpClient } from '../../support/http';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';

const { redisNamespace: namespace } = loadConfig();

/**
 * A single-node deployment moving to the per-queue key layout: the work the old
 * release left queued under `petstore:<queue>:*` is done once by the new workers, then removed.
 */
describe('upgrading from the old queue key layout', () => {
  let api: RunningApi;
  let worker: INestApplicationContext | undefined;
  let redis: Redis;
  let db: DataSource;

  beforeAll(async () => {
    api = await startApi();
    redis = new Redis(api.config.redisUrl);
    db = api.app.get(DataSource);
  });
  afterAll(() => closeAll([() => worker?.close(), () => api?.close(), async () => redis?.disconnect()]));

  /**
   * Moves a queue's keys to where the release before queuePrefix kept them, under the prefix
   * `petstore` (`petstore:{messages}:messages:wait` was `petstore:messages:wait`): BullMQ's keys
   * are otherwise the same.
   */
  async function toOldLayout(queue: string): Promise<number> {
    const keys = await redis.keys(`${queuePrefix(namespace, queue)}:*`);
    for (const key of keys) await redis.rename(key, `petstore:${key.slice(queuePrefix(namespace, queue).length + 1)}`);
    return keys.length;
  }

  it('processes every message queued under the old layout once', async () => {
    const { apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    const client = new HttpClient(api.url, apiKey);
    const messages = (
      await Promise.all(Array.from({ length: 30 }, (_, i) => client.post('/v1/messages', { message: `old ${i}` })))
    ).map((r) => r.body.id as string);
    // Queued (every outbox row dispatched; messages accepted together share a job), with no worker running: then
    // left under the old layout, as the old release did.
    await eventually(async () => (await db.query('SELECT count(*)::int AS n FROM outbox'))[0].n === 0);
    const waiting = await redis.llen(`${queuePrefix(namespace, MessageQueue.name)}:${MessageQueue.name}:wait`);
    expect(waiting).toBeGreaterThan(0);
    expect(await toOldLayout(MessageQueue.name)).toBeGreaterThan(0);
    expect(await redis.llen(`petstore:${MessageQueue.name}:wait`)).toBe(waiting);

    worker = await startWorker({ SWEEP_INTERVAL_MS: '500' });
    await eventually(async () => {
      const [{ open }] = await db.query(
        `SELECT count(*)::int AS open FROM messages WHERE id = ANY($1) AND status <> 'processed'`,
        [messages],
      );
      return open === 0;
    }, 30_000);
    const [{ processed }] = await db.query(
      `SELECT count(*)::int AS processed FROM events WHERE type = 'message.processed' AND resource_id = ANY($1)`,
      [messages],
    );
    expect(processed).toBe(messages.length);
  });

  it("removes the old layout's keys with queues:drop-old-layout, and none of the new", async () => {
    expect((await redis.keys(`petstore:${MessageQueue.name}:*`)).length).toBeGreaterThan(0);
    const { stdout } = await cli('queues:drop-old-layout', '--json');
    expect(JSON.parse(stdout).removed).toBeGreaterThan(0);
    expect(await redis.keys(`petstore:${MessageQueue.name}:*`)).toEqual([]);
    expect((await redis.keys(`${queuePrefix(namespace, MessageQueue.name)}:*`)).length).toBeGreaterThan(0);
  });
});
