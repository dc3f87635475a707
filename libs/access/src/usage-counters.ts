import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { countRedisError, REDIS, RedisClient } from '@app/redis';
import { bucketTag } from './rate-limit-subject';

// `<namespace>:rl:{a:<account>}:u:<minute start ms>`, fields `<keyId>:a|r|b` (admitted, refused, bans begun),
// written by the limiter's script in its own slot; the worker copies finished minutes to Postgres.
export const usageHashKey = (namespace: string, accountBucket: string, minuteStartMs: number) =>
  `${bucketTag(namespace, accountBucket)}:u:${minuteStartMs}`;

const USAGE_HASH = /:rl:\{a:(\d+)\}:u:(\d+)$/;

export function parseUsageHashKey(key: string): { accountId: number; minuteStartMs: number } | undefined {
  const m = USAGE_HASH.exec(key);
  return m ? { accountId: Number(m[1]), minuteStartMs: Number(m[2]) } : undefined;
}

// The API's live window (≤ 2 h) plus time for a late worker.
export const USAGE_HASH_TTL_MS = 3 * 3_600_000;

// Lets the worker find a minute's hashes without a SCAN; one hash tag for all of them.
export const usageIndexKey = (namespace: string, minuteStartMs: number) =>
  `${namespace}:usage:{index}:${minuteStartMs}`;

export const USAGE_INDEX_FLUSH_MS = 5_000;

// Off the request path: the limiter notes a key per account and batch, in memory.
@Injectable()
export class UsageIndex implements OnModuleDestroy {
  private readonly logger = new Logger(UsageIndex.name);
  private touched = new Set<string>();
  private timer?: NodeJS.Timeout;
  private warned = false;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly config: AppConfig,
  ) {}

  note(usageKey: string): void {
    this.touched.add(usageKey);
    // Started lazily, so processes that never limit hold no timer.
    this.timer ??= setInterval(() => void this.flush(), USAGE_INDEX_FLUSH_MS).unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** On failure the hashes are kept for the next try. */
  async flush(): Promise<void> {
    if (this.touched.size === 0) return;
    const batch = this.touched;
    this.touched = new Set();
    const byMinute = new Map<number, string[]>();
    for (const key of batch) {
      const minute = parseUsageHashKey(key)?.minuteStartMs ?? 0;
      byMinute.set(minute, [...(byMinute.get(minute) ?? []), key]);
    }
    try {
      const pipeline = this.redis.pipeline();
      for (const [minute, keys] of byMinute) {
        const index = usageIndexKey(this.config.redisNamespace, minute);
        pipeline.sadd(index, ...keys).pexpire(index, USAGE_HASH_TTL_MS);
      }
      const replies = (await pipeline.exec()) ?? [];
      const failed = replies.find(([err]) => err);
      if (failed) throw failed[0];
      this.warned = false;
    } catch (err) {
      for (const key of batch) this.touched.add(key);
      countRedisError('petstore', err as Error);
      if (!this.warned) {
        this.warned = true;
        this.logger.warn({ err: { message: (err as Error).message } }, 'usage index not written yet; will retry');
      }
    }
  }
}
