import { Cluster } from 'ioredis';
import { RedisClient, whenReady } from '@app/redis';
import { QueueDefinition } from './queue-definition';

const UNLINK_BATCH = 500;

/**
 * Removes what the queues left under the key layout before queuePrefix (`petstore:<queue>:*`,
 * one node only: it never worked on a cluster). Safe once no worker of the old release runs:
 * Postgres holds every record those jobs stood for, and the lost-job sweep has given each open
 * one a job under the new layout (docs/operations-at-scale.md, "Upgrading the key layout").
 * The new keys (`petstore:{<queue>}:...`) never match. Returns the number of keys removed.
 */
export async function dropOldKeyLayout(redis: RedisClient, queues: QueueDefinition[]): Promise<number> {
  if (redis instanceof Cluster) return 0;
  await whenReady(redis);
  let removed = 0;
  for (const { name } of queues) {
    const stream = redis.scanStream({ match: `petstore:${name}:*`, count: 1_000 });
    for await (const keys of stream as AsyncIterable<string[]>) {
      for (let i = 0; i < keys.length; i += UNLINK_BATCH)
        removed += await redis.unlink(...keys.slice(i, i + UNLINK_BATCH));
    }
  }
  return removed;
}
