import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { countRedisError, REDIS, RedisClient } from '@app/redis';

/**
 * Per-key usage as the limiter counts it: for each account and UTC minute, one Redis hash
 * `rl:{a:<account>}:u:<minute start ms>` (the account's hash tag: the limiter's script writes it
 * in the same call, one slot) with the fields `<keyId>:a` (admitted), `<keyId>:r` (refused,
 * 429) and `<keyId>:b` (bans begun). The worker copies finished minutes into Postgres
 * (libs/usage); the API reads the last two hours straight from these hashes.
 */
export const usageHashKey = (accountBucket: string, minuteStartMs: number) =>
  `rl:{${accountBucket}}:u:${minuteStartMs}`;

const USAGE_HASH = /^rl:\{a:(\d+)\}:u:(\d+)$/;

/** The account and minute of a usage hash, or undefined for any other key. */
export function parseUsageHashKey(key: string): { accountId: number; minuteStartMs: number } | undefined {
  const m = USAGE_HASH.exec(key);
  return m ? { accountId: Number(m[1]), minuteStartMs: Number(m[2]) } : undefined;
}

/** How long a usage hash lives: the API's live window (≤ 2 h) plus time for a late worker. */
export const USAGE_HASH_TTL_MS = 3 * 3_600_000;

/**
 * The set of usage hashes written in one minute, for the worker to find them without a SCAN.
 * All index sets share one hash tag: a few SADDs per API process every few seconds.
 */
export const usageIndexKey = (minuteStartMs: number) => `usage:{index}:${minuteStartMs}`;

/** How often each API process reports the usage hashes it touched. */
export const USAGE_INDEX_FLUSH_MS = 5_000;

/**
 * Collects the usage hashes this process's limiter wrote to and adds them to their minute's
 * index every USAGE_INDEX_FLUSH_MS (and once at shutdown). Off the request path: the limiter
 * notes a key per account and batch, in memory.
 */
@Injectable()
export class UsageIndex implements OnModuleDestroy {
  private readonly logger = new Logger(UsageIndex.name);
  private touched = new Set<string>();
  private timer?: NodeJS.Timeout;
  private warned = false;

  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  note(usageKey: string): void {
    this.touched.add(usageKey);
    // Started by the first request, so processes that never limit (worker, CLI) hold no timer.
    this.timer ??= setInterval(() => void this.flush(), USAGE_INDEX_FLUSH_MS).unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Adds the noted hashes to their minutes' index sets; on failure they are kept for the next try. */
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
        pipeline.sadd(usageIndexKey(minute), ...keys).pexpire(usageIndexKey(minute), USAGE_HASH_TTL_MS);
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
