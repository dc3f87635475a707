import { Inject, Injectable } from '@nestjs/common';
import { usageHashKey } from '@app/access';
import { AppConfig, Clock } from '@app/config';
import { preparedQuery, ReadReplicas } from '@app/database';
import { REDIS, RedisClient } from '@app/redis';
import {
  bucketStart,
  countsByKey,
  GRANULARITY_MS,
  HOUR_MS,
  KeyCounts,
  MINUTE_MS,
  UsageGranularity,
} from './usage-time';
import { CountsRow, usageHourQueries, usageMinuteQueries } from './usage.queries';

export interface UsageQuery {
  /** Inclusive; rounded down to its bucket. */
  fromMs: number;
  /** Exclusive; rounded up to a bucket boundary. */
  toMs: number;
  granularity: UsageGranularity;
  /** One key's usage; the whole account's when absent. */
  keyId?: number;
}

export interface UsageBucket extends KeyCounts {
  startMs: number;
}

// From the start of the previous UTC hour on, read live from the limiter's Redis hashes, so the current minute shows
// at once; before, from Postgres. The split is on an hour boundary, so no bucket is counted from both.
@Injectable()
export class UsageHistoryService {
  constructor(
    private readonly replicas: ReadReplicas,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async history(accountId: number, q: UsageQuery): Promise<UsageBucket[]> {
    const step = GRANULARITY_MS[q.granularity];
    const from = bucketStart(q.fromMs, q.granularity);
    const to = Math.ceil(q.toMs / step) * step;
    const now = this.clock.nowMs();
    const liveFrom = Math.floor(now / HOUR_MS) * HOUR_MS - HOUR_MS;
    const buckets = new Map<number, UsageBucket>();
    for (let start = from; start < to; start += step)
      buckets.set(start, { startMs: start, admitted: 0, refused: 0, bans: 0 });
    const add = (startMs: number, c: KeyCounts) => {
      const b = buckets.get(startMs);
      if (!b) return;
      b.admitted += c.admitted;
      b.refused += c.refused;
      b.bans += c.bans;
    };
    if (from < liveFrom) {
      // Copied long ago: a replica that lags a second serves it as well as the primary.
      const range = { accountId, from: new Date(from), to: new Date(Math.min(to, liveFrom)), keyId: q.keyId ?? null };
      const rows = await preparedQuery<CountsRow>(
        this.replicas.forStaleRead(),
        q.granularity === 'minute' ? usageMinuteQueries.counts(range) : usageHourQueries.counts(range, q.granularity),
      );
      for (const row of rows) add(row.start.getTime(), row);
    }
    if (to > liveFrom) {
      for (const [minute, counts] of await this.live(
        accountId,
        Math.max(from, liveFrom),
        Math.min(to, now + MINUTE_MS),
      )) {
        const forKey =
          q.keyId === undefined ? [...counts.values()] : [counts.get(q.keyId)].filter((c) => c !== undefined);
        for (const c of forKey) add(bucketStart(minute, q.granularity), c);
      }
    }
    return [...buckets.values()];
  }

  /** One pipeline: the minutes' hashes are all in the account's slot. */
  private async live(accountId: number, fromMs: number, toMs: number): Promise<[number, Map<number, KeyCounts>][]> {
    const minutes: number[] = [];
    for (let m = Math.floor(fromMs / MINUTE_MS) * MINUTE_MS; m < toMs; m += MINUTE_MS) minutes.push(m);
    if (minutes.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const m of minutes) pipeline.hgetall(usageHashKey(this.config.redisNamespace, `a:${accountId}`, m));
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([err, hash], i) => {
      if (err) throw err;
      return [minutes[i], countsByKey(hash as Record<string, string>)];
    });
  }
}
