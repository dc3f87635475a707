import { once } from 'node:events';
import Redis, { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import type { AppConfig } from '@app/config';
import { LearningCluster } from './learning-cluster';
import { watchErrors } from './redis-errors';

/** A client of one node (REDIS_URL) or of a cluster (REDIS_CLUSTER_NODES): the same commands. */
export type RedisClient = Redis | Cluster;

/** Where Redis is, as AppConfig says. */
export type RedisTarget = Pick<AppConfig, 'redisUrl' | 'redisCluster'>;

/** Reconnect for ever with a capped delay: Redis coming back must need no restart. */
const reconnectDelay = (times: number) => Math.min(times * 200, 2_000);

/**
 * RESP2, as before ioredis 6 (which speaks RESP3 unless told otherwise). Under RESP3 a Lua
 * script's `false` reaches the client as a boolean (ioredis maps it to 0), where RESP2 gives
 * null: our scripts and BullMQ's were written against RESP2's conversions.
 */
const PROTOCOL = 2;

/** Connection options from REDIS_URL (db index in the path, password in the userinfo). */
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

/**
 * A new client of the target with the given per-connection options (timeouts, retries, offline
 * queue). On a cluster the offline queue, auto-pipelining and the reconnect policy are the
 * cluster's own; every other option applies to each node's connection. The protocol is ours.
 */
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

/**
 * A client for request-path commands: fails fast instead of queueing while Redis is down,
 * so callers can fall back (limiter) or degrade (cache) within a bounded time.
 */
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
      // Commands issued in the same event-loop tick (concurrent requests' idempotency claims, for
      // one) leave in one write: each socket write is a system call and a wake-up of Redis.
      enableAutoPipelining: true,
    },
    cluster,
  );
  watchErrors(client, name);
  return client;
}

/**
 * Does the client reach a Redis that serves every key? A node answers PING; a cluster node
 * must also see all slots served (CLUSTER INFO's cluster_state), which a master lost without a
 * replica, or a failover in progress, turns to `fail`.
 */
export async function redisServes(client: RedisClient): Promise<boolean> {
  if (!(client instanceof Cluster)) return !(await isClusterNode(client));
  const info = (await client.cluster('INFO')) as string;
  return /^cluster_state:ok\r?$/m.test(info);
}

/**
 * A node of a cluster reached as a single node (REDIS_URL pointed at one): it answers PING, and
 * then MOVED for most keys. Never serving: configure REDIS_CLUSTER_NODES instead.
 */
export async function isClusterNode(client: Redis): Promise<boolean> {
  return /^cluster_enabled:1\r?$/m.test(await client.info('cluster'));
}

/** An INFO section of the node, or of each master of a cluster (memory is per master). */
export async function infoOfEachMaster(client: RedisClient, section: string): Promise<string[]> {
  if (!(client instanceof Cluster)) return [await client.info(section)];
  return Promise.all(client.nodes('master').map((node) => node.info(section)));
}

/** Resolves once a fail-fast client is connected (its commands fail, not wait, before that). */
export async function whenReady(client: RedisClient, timeoutMs = 2_000): Promise<void> {
  if (client.status === 'ready') return;
  await once(client, 'ready', { signal: AbortSignal.timeout(timeoutMs) }).catch(() => {
    throw new Error(`Redis not reachable within ${timeoutMs} ms`);
  });
}
