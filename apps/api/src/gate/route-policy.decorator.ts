import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Limits } from '@app/access';
import { Idempotent } from '../idempotency/idempotent.decorator';
import type { Scope } from '@app/access';

// A scope a key holds (SCOPE_RULES says which imply which), or `any` key of the account.
export type RouteScope = Scope | 'any';

/** Spent instead of the account's budget, which is only read. */
export interface OwnBudget extends Limits {
  name: string;
}

export interface RoutePolicy {
  scope: RouteScope;
  metering: 'account' | OwnBudget;
  /** Who gets a replay: any key of the account, or only the key that asked first (secrets). */
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

// Left in the generated document until publishPolicy states it.
export const POLICY_EXTENSION = 'x-policy';

/** Each keyed route's one declaration; the route table is compiled from it via the document. */
export function Policy(input: RoutePolicyInput): MethodDecorator {
  const policy: RoutePolicy = { ...DEFAULTS, ...input };
  const idempotent = policy.idempotent ? [Idempotent({ secret: policy.idempotent === 'same-key' })] : [];
  return applyDecorators(ApiExtension(POLICY_EXTENSION, policy), ...idempotent);
}
