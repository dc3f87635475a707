import { DataSource } from 'typeorm';
import { keySubject, PlanRateLimiter, RateLimitDecision, UsageIndex, usageHashKey, usageIndexKey } from '@app/access';
import { AppConfig } from '@app/config';
import { REDIS, RedisClient } from '@app/redis';
import { UsageAggregationService, UsageHistoryService, UsageModule } from '@app/usage';
import { TestClock } from '../support/test-clock';
import { ServiceFactory } from './service.factory';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** A UTC day of its own per test, 10 minutes into its third hour: no other test's minutes are near. */
let nextDay = Date.UTC(2034, 0, 1);
const freshMinute = () => (nextDay += 24 * HOUR) + 2 * HOUR + 10 * MINUTE;

interface Counts {
  admitted: number;
  refused: number;
  bans: number;
}
const zero: Counts = { admitted: 0, refused: 0, bans: 0 };
const countsOf = (decisions: RateLimitDecision[]): Counts => ({
  admitted: decisions.filter((d) => d.outcome === 'admitted').length,
  refused: decisions.filter((d) => d.outcome !== 'admitted').length,
  bans: decisions.filter((d) => d.newlyBanned).length,
});

describe('usage (service tier: the limiter counts, aggregation copies, history reads; Postgres and Redis)', () => {
  const clock = new TestClock();
  let factory: ServiceFactory;
  let db: DataSource;
  let redis: RedisClient;
  let limiter: PlanRateLimiter;
  let aggregation: UsageAggregationService;
  let history: UsageHistoryService;
  let namespace: string;

  /** An account with two keys. */
  async function account() {
    const accountId = await factory.account();
    const [k1, k2] = await Promise.all([1, 2].map(async () => (await factory.apiKey(accountId)).id));
    return { accountId, k1, k2 };
  }

  /** `n` requests of the key through the limiter at the clock's instant, its usage index flushed. */
  async function requests(accountId: number, keyId: number, n: number, perMinute = 1_000) {
    const decisions: RateLimitDecision[] = [];
    for (let i = 0; i < n; i++) {
      decisions.push(
        await limiter.consume(keySubject(accountId, keyId, 'business'), { perMinute, perDay: 100_000 }, clock.nowMs()),
      );
    }
    await factory.get(UsageIndex).flush();
    return decisions;
  }

  /** A run of the aggregation job at `atMs`. */
  async function aggregateAt(atMs: number) {
    clock.set(atMs);
    return aggregation.run();
  }

  const minuteRows = (accountId: number) =>
    db.query(
      `SELECT minute, key_id::int AS "keyId", admitted, refused, bans FROM usage_minutes
        WHERE account_id = $1 ORDER BY minute, key_id`,
      [accountId],
    );
  const minuteOf = (ms: number) => Math.floor(ms / MINUTE) * MINUTE;

  beforeAll(async () => {
    process.env.RATE_LIMIT_BAN_STRIKES = '2';
    factory = await ServiceFactory.startAt(clock, UsageModule.register('worker'));
    db = factory.db;
    redis = factory.app.get(REDIS);
    limiter = factory.get(PlanRateLimiter);
    aggregation = factory.get(UsageAggregationService);
    history = factory.get(UsageHistoryService);
    namespace = factory.get(AppConfig).redisNamespace;
  });
  afterAll(async () => {
    delete process.env.RATE_LIMIT_BAN_STRIKES;
    await factory?.close();
  });

  describe('aggregation', () => {
    it("copies a finished minute's admitted, refused and ban counts, per key, into usage_minutes", async () => {
      const at = freshMinute();
      const { accountId, k1, k2 } = await account();
      clock.set(at);
      const second = await requests(accountId, k2, 1, 3);
      const first = await requests(accountId, k1, 3, 3); // the third is the first refusal
      clock.advance(1_000); // refusals a second later are strikes: the second begins a ban
      first.push(...(await requests(accountId, k1, 3, 3)));
      expect(countsOf(first)).toEqual({ admitted: 2, refused: 4, bans: 1 });

      await aggregateAt(minuteOf(at) + 2 * MINUTE + 15_000);
      expect(await minuteRows(accountId)).toEqual([
        { minute: new Date(minuteOf(at)), keyId: k1, ...countsOf(first) },
        { minute: new Date(minuteOf(at)), keyId: k2, ...countsOf(second) },
      ]);
    });

    it('sums the copied minutes of an hour into usage_hours, per key', async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 2);
      clock.set(at + 5 * MINUTE);
      await requests(accountId, k1, 3);
      await aggregateAt(at + 8 * MINUTE);
      const hours = await db.query(
        `SELECT hour, key_id::int AS "keyId", admitted, refused, bans FROM usage_hours WHERE account_id = $1`,
        [accountId],
      );
      expect(hours).toEqual([
        { hour: new Date(Math.floor(at / HOUR) * HOUR), keyId: k1, admitted: 5, refused: 0, bans: 0 },
      ]);
    });

    it('writes the same numbers when a minute is copied again (a late index entry)', async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 4);
      await aggregateAt(at + 3 * MINUTE);
      await redis.sadd(usageIndexKey(namespace, minuteOf(at)), usageHashKey(namespace, `a:${accountId}`, minuteOf(at)));
      await aggregateAt(at + 4 * MINUTE);
      expect(await minuteRows(accountId)).toEqual([
        { minute: new Date(minuteOf(at)), keyId: k1, admitted: 4, refused: 0, bans: 0 },
      ]);
    });

    it('leaves a minute that has not settled yet for a later run', async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 1);
      await aggregateAt(at + 5_000);
      expect(await minuteRows(accountId)).toEqual([]);
      await aggregateAt(at + 2 * MINUTE);
      expect(await minuteRows(accountId)).toHaveLength(1);
    });

    it("removes the copied hashes from their minute's index", async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 1);
      expect(await redis.smembers(usageIndexKey(namespace, minuteOf(at)))).toHaveLength(1);
      expect(await aggregateAt(at + 2 * MINUTE)).toEqual({ minutes: 1, rows: 1 });
      expect(await redis.smembers(usageIndexKey(namespace, minuteOf(at)))).toEqual([]);
    });
  });

  describe('history', () => {
    /** Minute buckets from 2 minutes before `at`'s minute to 2 after, as [start, counts] pairs. */
    const minutesAround = async (accountId: number, at: number, keyId?: number) =>
      (
        await history.history(accountId, {
          fromMs: minuteOf(at) - 2 * MINUTE,
          toMs: minuteOf(at) + 3 * MINUTE,
          granularity: 'minute',
          keyId,
        })
      ).map(({ startMs, ...counts }) => [startMs - minuteOf(at), counts]);

    it('answers one bucket per step of the range, the empty ones as zeros', async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 2);
      expect(await minutesAround(accountId, at)).toEqual([
        [-2 * MINUTE, zero],
        [-MINUTE, zero],
        [0, { ...zero, admitted: 2 }],
        [MINUTE, zero],
        [2 * MINUTE, zero],
      ]);
    });

    it("reads the current and the previous UTC hour live from the limiter's counters, before any copy", async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 3);
      clock.set(at + 70 * MINUTE);
      expect(await minutesAround(accountId, at)).toContainEqual([0, { ...zero, admitted: 3 }]);
      expect(await minuteRows(accountId)).toEqual([]);
    });

    it('reads minutes before the previous UTC hour from the copy in Postgres', async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 3);
      await aggregateAt(at + 2 * MINUTE);
      await redis.del(usageHashKey(namespace, `a:${accountId}`, minuteOf(at)));
      clock.set(at + 2 * HOUR + 10 * MINUTE);
      expect(await minutesAround(accountId, at)).toContainEqual([0, { ...zero, admitted: 3 }]);
    });

    it('counts a minute once when it is both copied and still live', async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 3);
      await aggregateAt(at + 2 * MINUTE);
      // From before the live window: both sources are read, split at its start.
      const buckets = await history.history(accountId, {
        fromMs: at - 2 * HOUR,
        toMs: at + MINUTE,
        granularity: 'hour',
      });
      expect(buckets.at(-1)).toEqual({ startMs: Math.floor(at / HOUR) * HOUR, ...zero, admitted: 3 });
    });

    it('counts only the given key when asked, live and copied alike', async () => {
      const at = freshMinute();
      const { accountId, k1, k2 } = await account();
      clock.set(at);
      await requests(accountId, k1, 2);
      await requests(accountId, k2, 5);
      expect(await minutesAround(accountId, at, k1)).toContainEqual([0, { ...zero, admitted: 2 }]);
      await aggregateAt(at + 2 * MINUTE);
      clock.set(at + 3 * HOUR);
      expect(await minutesAround(accountId, at, k2)).toContainEqual([0, { ...zero, admitted: 5 }]);
    });

    it("sums a day's copied hours into its day bucket", async () => {
      const at = freshMinute();
      const { accountId, k1 } = await account();
      clock.set(at);
      await requests(accountId, k1, 2);
      await aggregateAt(at + 2 * MINUTE);
      clock.set(at + 2 * HOUR);
      await requests(accountId, k1, 3);
      await aggregateAt(at + 2 * HOUR + 2 * MINUTE);
      clock.set(at + 30 * HOUR);
      const day = Math.floor(at / (24 * HOUR)) * 24 * HOUR;
      const buckets = await history.history(accountId, { fromMs: day, toMs: day + 1, granularity: 'day' });
      expect(buckets).toEqual([{ startMs: day, ...zero, admitted: 5 }]);
    });

    it("counts none of another account's requests", async () => {
      const at = freshMinute();
      const mine = await account();
      const theirs = await account();
      clock.set(at);
      await requests(mine.accountId, mine.k1, 1);
      await requests(theirs.accountId, theirs.k1, 4);
      expect(await minutesAround(mine.accountId, at)).toContainEqual([0, { ...zero, admitted: 1 }]);
    });
  });
});
