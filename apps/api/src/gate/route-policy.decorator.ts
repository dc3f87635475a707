import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Limits } from '@app/access';
import { Idempotent } from '../idempotency/idempotent.decorator';

/**
 * Which keys reach a route. `write` implies `read` (as at GitHub and Stripe); `admin` alone
 * reaches only the routes marked `any` (account, limits, usage) and `admin` (keys).
 */
export type RouteScope = 'any' | 'read' | 'write' | 'admin';

/** A budget of its own per key, spent instead of the account's (the account's is only read). */
export interface OwnBudget extends Limits {
  name: string;
}

export interface RoutePolicy {
  scope: RouteScope;
  /** `account`: the account's plan budget; otherwise the key's own budget for this route. */
  metering: 'account' | OwnBudget;
  /**
   * Takes an Idempotency-Key (the handler runs its work through IdempotencyService), and who
   * gets a replay: any key of the account, or only the key that asked first (answers holding a
   * secret).
   */
  idempotent: false | 'account' | 'same-key';
  stability: 'stable' | 'beta' | 'experimental';
  deprecated: boolean;
}

export type RoutePolicyInput = Pick<RoutePolicy, 'scope'> & Partial<Omit<RoutePolicy, 'scope'>>;

const DEFAULTS: Omit<RoutePolicy, 'scope'> = {
  metering: 'account',
  idempotent: false,
  stability: 'stable',
  deprecated: false,
};

/** Where @Policy leaves the policy in the generated document, until publishPolicy states it. */
export const POLICY_EXTENSION = 'x-policy';

/**
 * Every keyed route's one declaration of who may call it, how it is metered, whether it takes an
 * Idempotency-Key, and its stability. It travels with the operation into the OpenAPI document,
 * from which the route table is compiled (route-table.ts).
 */
export function Policy(input: RoutePolicyInput): MethodDecorator {
  const policy: RoutePolicy = { ...DEFAULTS, ...input };
  const idempotent = policy.idempotent ? [Idempotent({ secret: policy.idempotent === 'same-key' })] : [];
  return applyDecorators(ApiExtension(POLICY_EXTENSION, policy), ...idempotent);
}
