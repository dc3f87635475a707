import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Counter } from 'prom-client';
import { parseUsageHashKey, USAGE_HASH_TTL_MS, USAGE_INDEX_FLUSH_MS, usageIndexKey } from '@app/access';
import { AppConfig, Clock } from '@app/config';
import { preparedQuery, TransactionRunner } from '@app/database';
import { JobQueues, OnJob, scheduleJob } from '@app/jobs';
import { REDIS, RedisClient } from '@app/redis';
import { AggregateUsageJob } from './usage.jobs';
import { countsByKey, HOUR_MS, MINUTE_MS } from './usage-time';
import { MinuteRows, usageHourQueries, usageMinuteQueries } from './usage.queries';

/** A minute is copied once every API process has had time to index it (two index flushes). */
const SETTLE_MS = 2 * USAGE_INDEX_FLUSH_MS;
/** How far back a run looks for minutes not copied yet: a worker outage shorter than this loses nothing. */
const LOOK_BACK_MS = USAGE_HASH_TTL_MS - 10 * MINUTE_MS;
const READ_CHUNK = 200;

const copied = new Counter({
  name: 'petstore_usage_rows_copied_total',
  help: 'Per-key usage minutes copied from Redis into Postgres',
});

// A row is set to the hash's count, never added to, so a run that repeats a minute (a crash, a late index entry)
// writes the same numbers again.
@Injectable()
export class UsageAggregationService implements OnApplicationBootstrap {
  private readonly logger = new Logger(UsageAggregationService.name);

  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly queues: JobQueues,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await scheduleJob(this.queues, AggregateUsageJob, this.config.usageAggregationIntervalMs, this.logger);
  }

  @OnJob(AggregateUsageJob)
  async run(): Promise<{ minutes: number; rows: number }> {
    const now = this.clock.nowMs();
    const last = Math.floor((now - SETTLE_MS) / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
    const minutes: number[] = [];
    for (let m = Math.floor((now - LOOK_BACK_MS) / MINUTE_MS) * MINUTE_MS; m <= last; m += MINUTE_MS) minutes.push(m);
    // Every index set shares one hash tag: one pipeline, one node.
    const pipeline = this.redis.pipeline();
    for (const m of minutes) pipeline.smembers(usageIndexKey(this.config.redisNamespace, m));
    const indexes = ((await pipeline.exec()) ?? []).map(([err, members], i) => {
      if (err) throw err;
      return { minute: minutes[i], keys: members as string[] };
    });
    let rows = 0;
    let done = 0;
    for (const { minute, keys } of indexes) {
      if (keys.length === 0) continue;
      rows += await this.copyMinute(minute, keys);
      done++;
    }
    if (rows) copied.inc(rows);
    return { minutes: done, rows };
  }

  private async copyMinute(minute: number, keys: string[]): Promise<number> {
    const rows: MinuteRows = { accountIds: [], minutes: [], keyIds: [], admitted: [], refused: [], bans: [] };
    const accounts = new Set<number>();
    for (let i = 0; i < keys.length; i += READ_CHUNK) {
      const chunk = keys.slice(i, i + READ_CHUNK);
      // Each hash is in its account's slot: separate commands (auto-pipelined per node by ioredis).
      const hashes = await Promise.all(chunk.map((key) => this.redis.hgetall(key)));
      chunk.forEach((key, j) => {
        const accountId = parseUsageHashKey(key)?.accountId;
        if (accountId === undefined) return;
        accounts.add(accountId);
        for (const [keyId, counts] of countsByKey(hashes[j])) {
          rows.accountIds.push(accountId);
          rows.minutes.push(new Date(minute));
          rows.keyIds.push(keyId);
          rows.admitted.push(counts.admitted);
          rows.refused.push(counts.refused);
          rows.bans.push(counts.bans);
        }
      });
    }
    const hour = Math.floor(minute / HOUR_MS) * HOUR_MS;
    await this.transactions.run(async (manager) => {
      await preparedQuery(manager, usageMinuteQueries.upsert(rows));
      await preparedQuery(manager, usageHourQueries.rollUp([...accounts], new Date(hour), new Date(hour + HOUR_MS)));
    });
    // SREM, not DEL: an API process may add to this index right now (a late flush); that entry
    // stays for the next run, which copies the whole hash again.
    await this.redis.srem(usageIndexKey(this.config.redisNamespace, minute), ...keys);
    return rows.accountIds.length;
  }
}
