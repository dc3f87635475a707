import { applyDecorators, Get } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Limits, Scope } from '@app/access';
import { Idempotent } from '../idempotency/idempotent.decorator';

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

/** Read by RouteTable.compile: the gate, the 405 answers and the OpenAPI document. */
export const RoutePolicyOf = DiscoveryService.createDecorator<RoutePolicy>();

/** Each keyed route's one declaration. */
export function Policy(input: RoutePolicyInput): MethodDecorator {
  const policy: RoutePolicy = { ...DEFAULTS, ...input };
  const idempotent = policy.idempotent ? [Idempotent({ secret: policy.idempotent === 'same-key' })] : [];
  return applyDecorators(RoutePolicyOf(policy), ...idempotent);
}

export const PublicRoute = DiscoveryService.createDecorator<string>();

// No API key, not rate-limited (health checks). The gate runs before Express routes a request, so
// it knows public routes by path (PublicPaths).
export function PublicGet(path: string): MethodDecorator {
  return applyDecorators(Get(path), PublicRoute(path));
}
