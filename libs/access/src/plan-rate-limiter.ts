import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Result } from 'ioredis';
import { Counter, Gauge } from 'prom-client';
import { AppConfig } from '@app/config';
import { countRedisError, LuaScript, REDIS, RedisClient, whenReady } from '@app/redis';
import { Limits } from './plan-limits';
import { dayResetOf, decide, minuteResetOf, RateLimitDecision, RawCounts, windowResets } from './rate-limit-decision';
import { ARGS_PER_CALL, KEYS_PER_CALL, rateLimitLua, RESULTS_PER_CALL } from './rate-limit.lua';
import { banFlagKey, bucketTag, RateLimitSubject } from './rate-limit-subject';
import { UsageIndex, usageHashKey } from './usage-counters';

export const RATE_LIMIT_COMMAND = 'petstoreRateLimit';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `args` as LuaScript.run takes them. */
    [RATE_LIMIT_COMMAND](args: (string | number)[]): Result<number[], Context>;
  }
}

/** A call's arguments but `now`: its limits, key id and mode (layout: rate-limit.lua.ts). */
type CallArgs = [string, string, string, 'consume' | 'peek'];

/** A subject's keys and its arguments that a call does not change, made once a minute (layout: rate-limit.lua.ts). */
interface Prepared {
  keys: string[];
  /** The usage hash (the last key); noted only for a key's calls. */
  usageKey: string;
  keyId: string;
  /** By mode, for the last limits seen: replaced, never changed, when they differ (calls in flight hold them). */
  callArgs: { consume: CallArgs; peek: CallArgs };
  perMinute: number;
  perDay: number;
}

interface QueuedCall {
  subject: RateLimitSubject;
  limits: Limits;
  nowMs: number;
  mode: 'consume' | 'peek';
  /** Shared by the subject's calls of one minute. */
  prepared: Prepared;
  /** Its arguments, held apart: another call may bring the subject new limits. */
  callArgs: CallArgs;
  resolve: (decision: RateLimitDecision) => void;
}

const NO_CALL_ARGS: CallArgs = ['', '', '', 'consume'];
const NO_LIMITS_YET = { consume: NO_CALL_ARGS, peek: NO_CALL_ARGS };
const OUTCOMES = ['admitted', 'limited', 'banned'] as const;
// Decisions by plan, then by outcome, handed to the counter when it is read (registered, read only through the
// registry): inc() hashes its labels into a new string on every call.
const tallies = new Map<string, number[]>();
new Counter({
  name: 'petstore_rate_limit_decisions_total',
  help: 'Rate limiter decisions by outcome and plan',
  labelNames: ['outcome', 'plan'] as const,
  collect() {
    for (const [plan, counts] of tallies) {
      for (let i = 0; i < OUTCOMES.length; i++) if (counts[i]) this.inc({ outcome: OUTCOMES[i], plan }, counts[i]);
      counts.fill(0);
    }
  },
});
const PROBE_MS = 1_000;
// A 429 takes this long to be read: refusals sooner after the first are not strikes.
export const STRIKE_GRACE_MS = 1_000;
// The script each client was given: its constants are the first limiter's.
const scripts = new WeakMap<object, string>();
const MAX_FALLBACK_BUCKETS = 100_000;
// A turn can hold thousands of calls: one script call's text and Redis's time on it stay bounded.
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
// event-loop turn (docs/internals/decisions/0013-rate-limiter-redis-calls.md); a per-process fallback answers while Redis fails.
@Injectable()
export class PlanRateLimiter implements OnApplicationBootstrap {
  private readonly logger = new Logger(PlanRateLimiter.name);
  private readonly local = new Map<string, { m: number; d: number; mReset: number; dReset: number }>();
  private degraded = false;
  // An unresponsive Redis costs one request per PROBE_MS a command timeout, not every request.
  private probeAtMs = 0;
  // By bucket; sent when the turn's I/O callbacks have all run. A new map each turn: a cleared one's old table keeps
  // its entries and, once V8 has moved it to the old generation, keeps the turn's calls from scavenges
  // (docs/internals/decisions/0053-in-flight-responses-in-slots.md).
  private queued = new Map<string, QueuedCall[]>();
  // By bucket, then ban key: no string made per call to find them.
  private readonly prepared = new Map<string, Map<string, Prepared>>();
  private preparedCount = 0;
  private preparedMinute = 0;
  // `now` as an argument, shared by the calls of one millisecond.
  private clock = { ms: -1, arg: '' };

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly config: AppConfig,
    private readonly usage: UsageIndex,
  ) {
    const lua = rateLimitLua({
      banStrikes: config.rateLimit.banStrikes,
      banMs: config.rateLimit.banSeconds * 1000,
      graceMs: STRIKE_GRACE_MS,
    });
    const defined = scripts.get(this.redis);
    if (defined !== undefined && defined !== lua)
      throw new Error('PlanRateLimiter: a client already limits with other ban settings');
    if (!this.redis[RATE_LIMIT_COMMAND]) {
      scripts.set(this.redis, lua);
      // Written at once, never auto-pipelined (which would hold each batch back one more turn).
      const script = new LuaScript(lua);
      const client = this.redis;
      client[RATE_LIMIT_COMMAND] = (args) => script.run(client, args) as Promise<number[]>;
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
    const prepared = this.preparedFor(subject, limits, nowMs);
    const callArgs = prepared.callArgs[mode];
    return new Promise<RateLimitDecision>((resolve) =>
      this.enqueue(subject.bucket, { subject, limits, nowMs, mode, prepared, callArgs, resolve }),
    );
  }

  private counted(decision: RateLimitDecision, subject: RateLimitSubject, mode: 'consume' | 'peek'): RateLimitDecision {
    if (mode === 'consume') {
      let counts = tallies.get(subject.plan);
      if (!counts) tallies.set(subject.plan, (counts = [0, 0, 0]));
      counts[OUTCOMES.indexOf(decision.outcome)]++;
    }
    return decision;
  }

  // A subject's keys change with the minute only: made once a minute, not on every call.
  private preparedFor(subject: RateLimitSubject, limits: Limits, nowMs: number): Prepared {
    const minute = minuteResetOf(nowMs);
    if (minute !== this.preparedMinute || this.preparedCount >= MAX_KEY_SETS) {
      this.prepared.clear();
      this.preparedCount = 0;
      this.preparedMinute = minute;
    }
    let byBan = this.prepared.get(subject.bucket);
    if (!byBan) this.prepared.set(subject.bucket, (byBan = new Map()));
    let p = byBan.get(subject.banKey);
    if (!p) {
      const namespace = this.config.redisNamespace;
      const tag = bucketTag(namespace, subject.bucket);
      const usageKey = usageHashKey(namespace, subject.bucket, minute - 60_000);
      const keys = [
        `${tag}:m:${minute}`,
        `${tag}:d:${dayResetOf(nowMs)}`,
        banFlagKey(namespace, subject),
        `${tag}:strikes:${subject.banKey}`,
        `${tag}:refused:${subject.banKey}`,
        usageKey,
      ];
      const keyId = String(subject.keyId ?? '');
      p = {
        keys,
        usageKey,
        keyId,
        callArgs: NO_LIMITS_YET,
        perMinute: 0,
        perDay: 0,
      };
      byBan.set(subject.banKey, p);
      this.preparedCount++;
    }
    if (p.perMinute !== limits.perMinute || p.perDay !== limits.perDay) {
      const keyId = p.keyId;
      const perMinute = String(limits.perMinute);
      const perDay = String(limits.perDay);
      p.callArgs = { consume: [perMinute, perDay, keyId, 'consume'], peek: [perMinute, perDay, keyId, 'peek'] };
      p.perMinute = limits.perMinute;
      p.perDay = limits.perDay;
    }
    return p;
  }

  /** setImmediate: the batch waits for every request this turn has read, not for a timer. */
  private enqueue(bucket: string, call: QueuedCall): void {
    if (this.queued.size === 0) setImmediate(this.flush);
    const calls = this.queued.get(bucket);
    if (calls) calls.push(call);
    else this.queued.set(bucket, [call]);
  }

  private readonly flush = (): void => {
    const queued = this.queued;
    this.queued = new Map();
    for (const calls of queued.values()) {
      this.noteUsage(calls);
      if (calls.length <= MAX_BATCH) void this.send(calls);
      else for (let i = 0; i < calls.length; i += MAX_BATCH) void this.send(calls.slice(i, i + MAX_BATCH));
    }
  };

  // One usage hash per minute the batch spans, for the worker to find.
  private noteUsage(calls: QueuedCall[]): void {
    const first = calls[0];
    const last = calls[calls.length - 1];
    if (first.prepared.keyId !== '' || last.prepared.keyId !== '') {
      this.usage.note(first.prepared.usageKey);
      this.usage.note(last.prepared.usageKey);
    }
  }

  // One array in the script's layout (every call's keys, then every call's arguments) behind the sha's slot.
  private async send(calls: QueuedCall[]): Promise<void> {
    const keyCount = calls.length * KEYS_PER_CALL;
    const argv = new Array<string | number>(2 + keyCount + calls.length * ARGS_PER_CALL);
    argv[0] = '';
    argv[1] = keyCount;
    let k = 2;
    let a = 2 + keyCount;
    for (const c of calls) {
      for (const key of c.prepared.keys) argv[k++] = key;
      const args = c.callArgs;
      argv[a++] = args[0];
      argv[a++] = args[1];
      argv[a++] = args[2];
      argv[a++] = args[3];
      argv[a++] = this.clockOf(c.nowMs);
    }
    let flat: number[];
    try {
      flat = await this.redis[RATE_LIMIT_COMMAND](argv);
      this.recovered();
    } catch (err) {
      this.degrade(err as Error);
      for (const c of calls) {
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

  private clockOf(nowMs: number): string {
    if (nowMs !== this.clock.ms) this.clock = { ms: nowMs, arg: String(nowMs) };
    return this.clock.arg;
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
