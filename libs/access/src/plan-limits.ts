import type { Plan } from './account.entity';

export interface Limits {
  perMinute: number;
  perDay: number;
}

// Enterprise limits live on the account.
export const PLAN_LIMITS: Record<Exclude<Plan, 'enterprise'>, Limits> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/** Open `GET /v1/events/stream` answers per API key at once, across every API replica. */
export const PLAN_STREAMS: Record<Plan, number> = { free: 2, pro: 10, business: 50, enterprise: 100 };

/** The same per account, whatever its keys: more keys (or revoked ones) open no more streams. */
export const PLAN_ACCOUNT_STREAMS: Record<Plan, number> = { free: 4, pro: 20, business: 100, enterprise: 500 };

export class LimitsConfigError extends Error {}

function checked(limits: Limits, what: string): Limits {
  for (const v of [limits.perMinute, limits.perDay]) {
    if (!Number.isInteger(v) || v <= 0) throw new LimitsConfigError(`${what}: limits must be positive integers`);
  }
  return limits;
}

// Fail at load, not per request, if the table is ever edited into nonsense.
for (const [plan, limits] of Object.entries(PLAN_LIMITS)) checked(limits, `plan ${plan}`);

/** An enterprise account without its own limits is a configuration error. */
export function limitsFor(account: { plan: Plan; limitPerMinute: number | null; limitPerDay: number | null }): Limits {
  if (account.plan !== 'enterprise') {
    const limits = PLAN_LIMITS[account.plan];
    if (!limits) throw new LimitsConfigError(`plan ${String(account.plan)} has no limits`);
    return limits;
  }
  return checked({ perMinute: account.limitPerMinute ?? 0, perDay: account.limitPerDay ?? 0 }, 'enterprise account');
}

// Callers without a valid key are limited per client address.
export const ANONYMOUS_LIMITS: Limits = PLAN_LIMITS.free;

/** Events one `POST /v1/webhooks/{webhookId}/recover` queues at most (`more: true` says some are left). */
export const PLAN_RECOVER_PER_CALL: Record<Plan, number> = {
  free: 100,
  pro: 1_000,
  business: 5_000,
  enterprise: 10_000,
};
