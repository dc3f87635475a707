import { once } from 'node:events';
import { Cluster } from 'ioredis';
import { loadConfig } from '@app/config';
import { connectRedis } from '@app/redis';
import { RedisCluster } from '../support/redis-cluster';

/** Drops every connection of the client (as BullMQ's watchdog does), then connects it again. */
async function reconnect(client: Cluster): Promise<void> {
  const ended = once(client, 'end');
  client.disconnect();
  await ended;
  await client.connect();
}

describe('the Redis Cluster client (service tier: a real cluster, no app)', () => {
  let cluster: RedisCluster;
  /** The masters at the start, each with its replica: one per test is killed, its replica takes over. */
  let seeds: number[];
  const clients: Cluster[] = [];

  beforeAll(async () => {
    cluster = await RedisCluster.start();
    seeds = await cluster.masters();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await cluster?.stop();
  });

  /** A client whose only seed is a master: REDIS_CLUSTER_NODES as an operator may set it. */
  const client = (seed: number) => {
    const c = connectRedis(loadConfig({ REDIS_CLUSTER_NODES: `127.0.0.1:${seed}` }), {
      maxRetriesPerRequest: null,
    }) as Cluster;
    clients.push(c);
    return c;
  };

  it('connects again, after its only seed was killed, through the nodes it learnt', async () => {
    const seed = seeds[0];
    const c = client(seed);
    await once(c, 'ready');
    await cluster.failOver(seed);
    await reconnect(c);
    await c.set('learning-cluster:client', '1');
    expect(await c.get('learning-cluster:client')).toBe('1');
  });

  it('gives its copies (BullMQ blocking clients) the nodes it learnt: one connects again after the seed was killed', async () => {
    const seed = seeds[1];
    const c = client(seed);
    await once(c, 'ready');
    const copy = c.duplicate();
    clients.push(copy);
    await once(copy, 'ready');
    await cluster.failOver(seed);
    await reconnect(copy);
    expect(await copy.bzpopmin('learning-cluster:empty', 0.01)).toBeNull();
  });
});
