import { EntityManager } from 'typeorm';
import { ApiError } from '@app/errors';
import { preparedQuery } from '@app/database';
import type { Plan } from './account.entity';
import { accountQueries, quotaQueries } from './access.queries';

export interface Quotas {
  /** Rotated-out keys count until their grace ends (they still authenticate). */
  keys: number;
  webhooks: number;
}

// Webhooks are capped lower: each multiplies every event into an outbound POST retried for days.
export const PLAN_QUOTAS: Record<Plan, Quotas> = {
  free: { keys: 10, webhooks: 10 },
  pro: { keys: 25, webhooks: 25 },
  business: { keys: 100, webhooks: 50 },
  enterprise: { keys: 250, webhooks: 100 },
};

export type QuotaResource = keyof Quotas;

const FREE_ONE: Record<QuotaResource, string> = { keys: 'revoke one', webhooks: 'delete one' };

// 422 quota_exceeded at the plan's number. Call it inside the creating transaction: the account
// row stays locked, so of two creates racing for the last place only one gets it.
export async function assertWithinQuota(
  manager: EntityManager,
  accountId: number,
  resource: QuotaResource,
  now = new Date(),
): Promise<void> {
  const [account] = await preparedQuery<{ plan: Plan }>(manager, accountQueries.lockPlan(accountId));
  if (!account) throw ApiError.notFound('Account');
  const limit = PLAN_QUOTAS[account.plan][resource];
  const count = resource === 'keys' ? quotaQueries.keys(accountId, now) : quotaQueries.webhooks(accountId);
  const [{ n }] = await preparedQuery<{ n: number }>(manager, count);
  if (n >= limit) {
    throw new ApiError(
      'quota_exceeded',
      `The ${account.plan} plan allows ${limit} ${resource}; ${FREE_ONE[resource]} first`,
      [{ field: resource, message: `limit ${limit} on plan ${account.plan}` }],
    );
  }
}
