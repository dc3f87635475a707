import { HeaderBlock, HeaderTarget } from '@app/observability';
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

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export const minuteResetOf = (nowMs: number): number => Math.floor(nowMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
export const dayResetOf = (nowMs: number): number => Math.floor(nowMs / DAY_MS) * DAY_MS + DAY_MS;

export function windowResets(nowMs: number): { minute: number; day: number } {
  return { minute: minuteResetOf(nowMs), day: dayResetOf(nowMs) };
}

/** outcome 0 admitted, 1 refused, 2 banned, 3 banned by this request; `ms` until the refusal or ban ends. */
export interface RawCounts {
  outcome: 0 | 1 | 2 | 3;
  minuteCount: number;
  dayCount: number;
  ms: number;
}

export function decide(raw: RawCounts, limits: Limits, nowMs: number, fallback: boolean): RateLimitDecision {
  const minute = windowState('minute', limits.perMinute, raw.minuteCount, minuteResetOf(nowMs));
  const day = windowState('day', limits.perDay, raw.dayCount, dayResetOf(nowMs));
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

function windowState(name: WindowName, limit: number, used: number, resetAtMs: number): WindowState {
  return { name, limit, used, remaining: Math.max(0, limit - used), resetAtMs };
}

// Set on every answer, by the gate alone: one entry of Node's header table
// (docs/internals/decisions/0050-header-block.md).
const RATE_LIMIT_BLOCK = new HeaderBlock([
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-RateLimit-Used',
  'X-RateLimit-Resource',
  'RateLimit-Policy',
  'RateLimit',
]);

// The policy and the reset change once a plan or a minute: the last ones are reused (one plan, one minute at a time).
let policyOf = { minute: 0, day: 0, text: '', minuteLimit: '', dayLimit: '' };
let resetOf = { ms: 0, text: '' };

/** Sets the X-RateLimit-* set and the IETF draft's pair, from the same numbers, on `target`. */
export function setRateLimitHeaders(target: HeaderTarget, d: RateLimitDecision, nowMs: number): void {
  const r = d.reported;
  if (policyOf.minute !== d.minute.limit || policyOf.day !== d.day.limit) {
    const minuteLimit = String(d.minute.limit);
    const dayLimit = String(d.day.limit);
    const text = `"minute";q=${minuteLimit};w=60, "day";q=${dayLimit};w=86400`;
    policyOf = { minute: d.minute.limit, day: d.day.limit, text, minuteLimit, dayLimit };
  }
  if (resetOf.ms !== r.resetAtMs) resetOf = { ms: r.resetAtMs, text: String(Math.ceil(r.resetAtMs / 1000)) };
  const secondsToReset = Math.max(0, Math.ceil((r.resetAtMs - nowMs) / 1000));
  const remaining = String(r.remaining);
  const limit =
    r.limit === policyOf.minute ? policyOf.minuteLimit : r.limit === policyOf.day ? policyOf.dayLimit : String(r.limit);
  // Digits, window names and the policy's fixed text: valid header values, as HeaderBlock requires.
  RATE_LIMIT_BLOCK.set(target, [
    limit,
    remaining,
    resetOf.text,
    String(r.used),
    r.name,
    policyOf.text,
    `"${r.name}";r=${remaining};t=${secondsToReset}`,
  ]);
  if (d.retryAfterSeconds !== undefined) target.setHeader('Retry-After', String(d.retryAfterSeconds));
}

/** The headers `setRateLimitHeaders` sets, by name. */
export function rateLimitHeaders(d: RateLimitDecision, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {};
  setRateLimitHeaders({ setHeader: (name, value) => (headers[name] = value) }, d, nowMs);
  return headers;
}
