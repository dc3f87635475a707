import { Limits } from './plan-limits';

export type WindowName = 'minute' | 'day';

export interface WindowState {
  name: WindowName;
  limit: number;
  used: number;
  remaining: number;
  /** Aligned to the UTC minute or day. */
  resetAtMs: number;
}

export interface RateLimitDecision {
  outcome: 'admitted' | 'limited' | 'banned';
  /** This very request tipped the key into a ban (emit api_key.banned once). */
  newlyBanned: boolean;
  minute: WindowState;
  day: WindowState;
  reported: WindowState;
  retryAfterSeconds?: number;
  fallback: boolean;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export function windowResets(nowMs: number): { minute: number; day: number } {
  return {
    minute: Math.floor(nowMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS,
    day: Math.floor(nowMs / DAY_MS) * DAY_MS + DAY_MS,
  };
}

/** outcome 0 admitted, 1 refused, 2 banned, 3 banned by this request; `ms` until the refusal or ban ends. */
export interface RawCounts {
  outcome: 0 | 1 | 2 | 3;
  minuteCount: number;
  dayCount: number;
  ms: number;
}

export function decide(raw: RawCounts, limits: Limits, nowMs: number, fallback: boolean): RateLimitDecision {
  const resets = windowResets(nowMs);
  const win = (name: WindowName, limit: number, used: number, resetAtMs: number): WindowState => ({
    name,
    limit,
    used,
    remaining: Math.max(0, limit - used),
    resetAtMs,
  });
  const minute = win('minute', limits.perMinute, raw.minuteCount, resets.minute);
  const day = win('day', limits.perDay, raw.dayCount, resets.day);
  // An exhausted day window is always the one reported: it alone decides when requests are
  // admitted again, so Reset and Retry-After never disagree.
  const reported = day.remaining < minute.remaining || day.remaining === 0 ? day : minute;
  const outcome = raw.outcome === 0 ? 'admitted' : raw.outcome === 1 ? 'limited' : 'banned';
  const decision: RateLimitDecision = { outcome, newlyBanned: raw.outcome === 3, minute, day, reported, fallback };
  if (outcome !== 'admitted') {
    const until = outcome === 'limited' ? reported.resetAtMs - nowMs : raw.ms;
    decision.retryAfterSeconds = Math.max(1, Math.ceil(until / 1000));
  }
  return decision;
}

/** The X-RateLimit-* set and the IETF draft's pair, from the same numbers. */
export function rateLimitHeaders(d: RateLimitDecision, nowMs: number): Record<string, string> {
  const r = d.reported;
  const secondsToReset = Math.max(0, Math.ceil((r.resetAtMs - nowMs) / 1000));
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(r.limit),
    'X-RateLimit-Remaining': String(r.remaining),
    'X-RateLimit-Reset': String(Math.ceil(r.resetAtMs / 1000)),
    'X-RateLimit-Used': String(r.used),
    'X-RateLimit-Resource': r.name,
    'RateLimit-Policy': `"minute";q=${d.minute.limit};w=60, "day";q=${d.day.limit};w=86400`,
    RateLimit: `"${r.name}";r=${r.remaining};t=${secondsToReset}`,
  };
  if (d.retryAfterSeconds !== undefined) headers['Retry-After'] = String(d.retryAfterSeconds);
  return headers;
}
