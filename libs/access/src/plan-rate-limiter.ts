import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Result } from 'ioredis';
import { Counter, Gauge } from 'prom-client';
import { AppConfig } from '@app/config';
import { countRedisError, REDIS, RedisClient, whenReady } from '@app/redis';
import { Limits } from './plan-limits';
import { decide, RateLimitDecision, RawCounts, windowResets } from './rate-limit-decision';
import { RATE_LIMIT_LUA, RESULTS_PER_CALL } from './rate-limit.lua';
import { banFlagKey, bucketTag, RateLimitSubject } from './rate-limit-subject';
import { UsageIndex, usageHashKey } from './usage-counters';

export const RATE_LIMIT_COMMAND = 'petstoreRateLimit';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    [RATE_LIMIT_COMMAND](...args: (string | number)[]): Result<number[], Context>;
  }
}

interface QueuedCall {
  subject: RateLimitSubject;
  limits: Limits;
  nowMs: number;
  mode: 'consume' | 'peek';
  /** Shared by the subject's calls of one minute: never changed. */
  keys: string[];
  args: (string | number)[];
  resolve: (decision: RateLimitDecision) => void;
}

const decisions = new Counter({
  name: 'petstore_rate_limit_decisions_total',
  help: 'Rate limiter decisions by outcome and plan',
  labelNames: ['outcome', 'plan'] as const,
});
const PROBE_MS = 1_000;
// Positions in a call's keys and arguments (rate-limit.lua.ts).
const USAGE_KEY = 5;
const USAGE_ARG = 9;
// A 429 takes this long to be read: refusals sooner after the first are not strikes.
export const STRIKE_GRACE_MS = 1_000;
const MAX_FALLBACK_BUCKETS = 100_000;
// A turn can hold thousands of calls; each spreads 14 values as arguments, which must stay far
// below V8's argument limit (a RangeError would send the whole batch to the fallback).
export const MAX_BATCH = 500;
// Subjects whose keys are kept within a minute (a flood of client addresses starts the set again).
const MAX_KEY_SETS = 10_000;

const fallbackActive = new Gauge({
  name: 'petstore_rate_limit_fallback_active',
  help: '1 while the limiter runs on the per-process fallback because Redis is unreachable',
});
const fallbackDecisions = new Counter({
  name: 'petstore_rate_limit_fallback_decisions_total',
  help: 'Decisions taken by the per-process fallback limiter',
});

// Fixed UTC minute and day windows checked and counted in one script call per account and
// event-loop turn (docs/internals/decisions.md); a per-process fallback answers while Redis fails.
@Injectable()
export class PlanRateLimiter implements OnApplicationBootstrap {
  private readonly logger = new Logger(PlanRateLimiter.name);
  private readonly local = new Map<string, { m: number; d: number; mReset: number; dReset: number }>();
  private degraded = false;
  // An unresponsive Redis costs one request per PROBE_MS a command timeout, not every request.
  private probeAtMs = 0;
  // By bucket; sent when the turn's I/O callbacks have all run.
  private readonly queued = new Map<string, QueuedCall[]>();
  private readonly keys = new Map<string, string[]>();
  private keysMinute = 0;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly config: AppConfig,
    private readonly usage: UsageIndex,
  ) {
    if (!this.redis[RATE_LIMIT_COMMAND]) {
      this.redis.defineCommand(RATE_LIMIT_COMMAND, { lua: RATE_LIMIT_LUA });
      // Auto-pipelining would hold each batch back one more turn; ioredis reads this list at each call.
      this.redis.options.autoPipeliningIgnoredCommands = [
        ...(this.redis.options.autoPipeliningIgnoredCommands ?? []),
        RATE_LIMIT_COMMAND,
      ];
    }
  }
  // A process that listened before its Redis connection was up counted its first requests alone.
  async onApplicationBootstrap(): Promise<void> {
    await whenReady(this.redis).catch(() => undefined);
  }

  consume(subject: RateLimitSubject, limits: Limits, nowMs = Date.now()): Promise<RateLimitDecision> {
    return this.run(subject, limits, nowMs, 'consume');
  }

  peek(subject: RateLimitSubject, limits: Limits, nowMs = Date.now()): Promise<RateLimitDecision> {
    return this.run(subject, limits, nowMs, 'peek');
  }

  // One promise a call, settled from the batch's answer: no async wrappers, each a promise and a turn more.
  private run(
    subject: RateLimitSubject,
    limits: Limits,
    nowMs: number,
    mode: 'consume' | 'peek',
  ): Promise<RateLimitDecision> {
    if (this.degraded && (Date.now() < this.probeAtMs || this.redis.status !== 'ready')) {
      return Promise.resolve(this.counted(this.fallback(subject.bucket, limits, nowMs, mode), subject, mode));
    }
    const resets = windowResets(nowMs);
    return new Promise<RateLimitDecision>((resolve) =>
      this.enqueue(subject.bucket, {
        subject,
        limits,
        nowMs,
        mode,
        keys: this.keysOf(subject, resets.minute, resets.day),
        args: [
          limits.perMinute,
          limits.perDay,
          resets.minute - nowMs,
          resets.day - nowMs,
          this.config.rateLimit.banStrikes,
          this.config.rateLimit.banSeconds * 1000,
          mode,
          nowMs,
          STRIKE_GRACE_MS,
          subject.keyId ?? '',
        ],
        resolve,
      }),
    );
  }

  private counted(decision: RateLimitDecision, subject: RateLimitSubject, mode: 'consume' | 'peek'): RateLimitDecision {
    if (mode === 'consume') decisions.inc({ outcome: decision.outcome, plan: subject.plan });
    return decision;
  }

  // A subject's keys change with the minute only: made once a minute, not on every call.
  private keysOf(subject: RateLimitSubject, minute: number, day: number): string[] {
    if (minute !== this.keysMinute || this.keys.size >= MAX_KEY_SETS) {
      this.keys.clear();
      this.keysMinute = minute;
    }
    const id = `${subject.bucket} ${subject.banKey}`;
    let keys = this.keys.get(id);
    if (!keys) {
      const tag = bucketTag(subject.bucket);
      keys = [
        `${tag}:m:${minute}`,
        `${tag}:d:${day}`,
        banFlagKey(subject),
        `${tag}:strikes:${subject.banKey}`,
        `${tag}:refused:${subject.banKey}`,
        usageHashKey(subject.bucket, minute - 60_000),
      ];
      this.keys.set(id, keys);
    }
    return keys;
  }

  /** setImmediate: the batch waits for every request this turn has read, not for a timer. */
  private enqueue(bucket: string, call: QueuedCall): void {
    if (this.queued.size === 0) setImmediate(() => this.flush());
    const calls = this.queued.get(bucket);
    if (calls) calls.push(call);
    else this.queued.set(bucket, [call]);
  }

  private flush(): void {
    for (const calls of this.queued.values()) {
      this.noteUsage(calls);
      for (let i = 0; i < calls.length; i += MAX_BATCH) void this.send(calls.slice(i, i + MAX_BATCH));
    }
    this.queued.clear();
  }

  // One usage hash per minute the batch spans, for the worker to find.
  private noteUsage(calls: QueuedCall[]): void {
    const first = calls[0];
    const last = calls[calls.length - 1];
    if (first.args[USAGE_ARG] !== '' || last.args[USAGE_ARG] !== '') {
      this.usage.note(first.keys[USAGE_KEY]);
      this.usage.note(last.keys[USAGE_KEY]);
    }
  }

  private async send(calls: QueuedCall[]): Promise<void> {
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const c of calls) {
      keys.push(...c.keys);
      args.push(...c.args);
    }
    let flat: number[];
    try {
      flat = await this.redis[RATE_LIMIT_COMMAND](keys.length, ...keys, ...args);
      this.recovered();
    } catch (err) {
      for (const c of calls) {
        this.degrade(err as Error);
        c.resolve(this.counted(this.fallback(c.subject.bucket, c.limits, c.nowMs, c.mode), c.subject, c.mode));
      }
      return;
    }
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i];
      const o = i * RESULTS_PER_CALL;
      const raw: RawCounts = {
        outcome: flat[o] as RawCounts['outcome'],
        minuteCount: flat[o + 1],
        dayCount: flat[o + 2],
        ms: flat[o + 3],
      };
      c.resolve(this.counted(decide(raw, c.limits, c.nowMs, false), c.subject, c.mode));
    }
  }

  // No bans: strikes need the shared view.
  private fallback(bucket: string, limits: Limits, nowMs: number, mode: 'consume' | 'peek'): RateLimitDecision {
    fallbackDecisions.inc();
    const resets = windowResets(nowMs);
    let s = this.local.get(bucket);
    if (!s || s.dReset !== resets.day) s = { m: 0, d: 0, mReset: resets.minute, dReset: resets.day };
    if (s.mReset !== resets.minute) Object.assign(s, { m: 0, mReset: resets.minute });
    if (!this.local.has(bucket) && this.local.size >= MAX_FALLBACK_BUCKETS) {
      this.local.delete(this.local.keys().next().value as string);
    }
    this.local.set(bucket, s);
    if (mode === 'peek') return decide({ outcome: 0, minuteCount: s.m, dayCount: s.d, ms: 0 }, limits, nowMs, true);
    if (s.m < limits.perMinute && s.d < limits.perDay) {
      s.m++;
      s.d++;
      return decide({ outcome: 0, minuteCount: s.m, dayCount: s.d, ms: 0 }, limits, nowMs, true);
    }
    return decide({ outcome: 1, minuteCount: s.m, dayCount: s.d, ms: 0 }, limits, nowMs, true);
  }

  private degrade(err: Error): void {
    this.probeAtMs = Date.now() + PROBE_MS;
    countRedisError('petstore', err);
    if (this.degraded) return;
    this.degraded = true;
    fallbackActive.set(1);
    this.logger.error(
      { err: { message: err.message } },
      'Redis unreachable: rate limiting per process until it returns',
    );
  }

  private recovered(): void {
    if (!this.degraded) return;
    this.degraded = false;
    fallbackActive.set(0);
    this.local.clear();
    this.logger.warn('Redis reachable again: rate limiting shared across processes');
  }
}
