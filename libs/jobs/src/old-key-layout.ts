import { Cluster } from 'ioredis';
import { RedisClient, whenReady } from '@app/redis';
import { QueueDefinition } from './queue-definition';

const UNLINK_BATCH = 500;

// Keys of the layout before queuePrefix (one node only). Safe once no old worker runs: the sweep has given each
// open record a job under the new layout (docs/operations-at-scale.md, "Upgrading the key layout").
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
