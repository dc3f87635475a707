import { once } from 'node:events';
import Redis, { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import type { AppConfig } from '@app/config';
import { LearningCluster } from '@app/reaches';
import { watchErrors } from './redis-errors';

export type RedisClient = Redis | Cluster;

export type RedisTarget = Pick<AppConfig, 'redisUrl' | 'redisCluster'>;

// Redis coming back must need no restart.
const reconnectDelay = (times: number) => Math.min(times * 200, 2_000);

// RESP2, as before ioredis 6: under RESP3 a Lua `false` reaches the client as 0, not null, and
// our scripts and BullMQ's were written against RESP2's conversions.
const PROTOCOL = 2;

export function redisOptions(url: string): RedisOptions & { retryStrategy: typeof reconnectDelay } {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    protocol: PROTOCOL,
    retryStrategy: reconnectDelay,
  };
}

/** On a cluster the offline queue, auto-pipelining and reconnect policy are the cluster's own. */
export function connectRedis(
  target: RedisTarget,
  options: Omit<RedisOptions, 'protocol' | 'replyMapping'>,
  cluster: Partial<Omit<ClusterOptions, 'redisOptions'>> = {},
): RedisClient {
  if (!target.redisCluster) return new Redis({ ...redisOptions(target.redisUrl), ...options });
  const { nodes, username, password, tls } = target.redisCluster;
  const { enableOfflineQueue, enableAutoPipelining, autoPipeliningIgnoredCommands, ...perNode } = options;
  return LearningCluster.fromSeeds(nodes, {
    redisOptions: { protocol: PROTOCOL, ...perNode, username, password, tls: tls ? {} : undefined },
    enableOfflineQueue,
    enableAutoPipelining,
    autoPipeliningIgnoredCommands,
    clusterRetryStrategy: reconnectDelay,
    // A failover takes the cluster's node timeout and more: commands wait across it, not fail.
    retryDelayOnClusterDown: 300,
    retryDelayOnFailover: 200,
    ...cluster,
  });
}

// Fails fast instead of queueing while Redis is down, so callers can fall back (limiter) or
// degrade (cache) within a bounded time.
export function createFailFastClient(
  target: RedisTarget,
  name: string,
  cluster: Partial<Omit<ClusterOptions, 'redisOptions'>> = {},
): RedisClient {
  const client = connectRedis(
    target,
    {
      connectionName: name,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1_000,
      // Commands of one event-loop tick leave in one write: each write is a system call and a Redis wake-up.
      enableAutoPipelining: true,
    },
    cluster,
  );
  watchErrors(client, name);
  return client;
}

/** A cluster must also see all slots served: a master lost without a replica, or a failover, fails it. */
export async function redisServes(client: RedisClient): Promise<boolean> {
  if (!(client instanceof Cluster)) return !(await isClusterNode(client));
  const info = (await client.cluster('INFO')) as string;
  return /^cluster_state:ok\r?$/m.test(info);
}

/** A cluster node reached as a single node answers PING, then MOVED for most keys. */
export async function isClusterNode(client: Redis): Promise<boolean> {
  return /^cluster_enabled:1\r?$/m.test(await client.info('cluster'));
}

export async function infoOfEachMaster(client: RedisClient, section: string): Promise<string[]> {
  if (!(client instanceof Cluster)) return [await client.info(section)];
  return Promise.all(client.nodes('master').map((node) => node.info(section)));
}

export async function whenReady(client: RedisClient, timeoutMs = 2_000): Promise<void> {
  if (client.status === 'ready') return;
  await once(client, 'ready', { signal: AbortSignal.timeout(timeoutMs) }).catch(() => {
    throw new Error(`Redis not reachable within ${timeoutMs} ms`);
  });
}
