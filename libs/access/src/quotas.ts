import { EntityManager } from 'typeorm';
import { ApiError } from '@app/errors';
import { preparedQuery } from '@app/database';
import type { Plan } from './account.entity';

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

const COUNTS: Record<QuotaResource, string> = {
  keys: `SELECT count(*)::int AS n FROM api_keys
          WHERE account_id = $1 AND revoked_at IS NULL AND (rotated_out_at IS NULL OR rotated_out_at > $2)
            AND (expires_at IS NULL OR expires_at > $2)`,
  webhooks: 'SELECT count(*)::int AS n FROM webhooks WHERE account_id = $1',
};

const FREE_ONE: Record<QuotaResource, string> = { keys: 'revoke one', webhooks: 'delete one' };

// 422 quota_exceeded at the plan's number. Call it inside the creating transaction: the account
// row stays locked, so of two creates racing for the last place only one gets it.
export async function assertWithinQuota(
  manager: EntityManager,
  accountId: number,
  resource: QuotaResource,
  now = new Date(),
): Promise<void> {
  const [account] = (await preparedQuery(manager, 'SELECT plan FROM accounts WHERE id = $1 FOR UPDATE', [
    accountId,
  ])) as {
    plan: Plan;
  }[];
  if (!account) throw ApiError.notFound('Account');
  const limit = PLAN_QUOTAS[account.plan][resource];
  const params = resource === 'keys' ? [accountId, now] : [accountId];
  const [{ n }] = (await preparedQuery(manager, COUNTS[resource], params)) as { n: number }[];
  if (n >= limit) {
    throw new ApiError(
      'quota_exceeded',
      `The ${account.plan} plan allows ${limit} ${resource}; ${FREE_ONE[resource]} first`,
      [{ field: resource, message: `limit ${limit} on plan ${account.plan}` }],
    );
  }
}
