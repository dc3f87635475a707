import { applyDecorators, Get, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiExtension } from '@nestjs/swagger';
import type { FastifyContextConfig } from 'fastify';
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

// What a Fastify route carries in its `config`: the request gate reads it for the route the router matched.
declare module 'fastify' {
  interface FastifyContextConfig {
    /** A keyed route's policy. */
    policy?: RoutePolicy;
    /** No API key, no rate limit. */
    public?: true;
    /** A method-not-allowed route: the methods its path takes (RFC 9110 `Allow`). */
    allow?: readonly string[];
  }
}

const DEFAULTS: Omit<RoutePolicy, 'scope'> = {
  metering: 'account',
  idempotent: false,
  stability: 'stable',
  deprecated: false,
};

/** Where the policy rides into the OpenAPI document's operation, which publishes it and removes this. */
export const POLICY_EXTENSION = 'x-policy';

/**
 * Each keyed route's one declaration: travels with the route to Fastify, which hands it to the gate, and with the
 * operation into the OpenAPI document.
 */
export function Policy(input: RoutePolicyInput): MethodDecorator {
  const policy: RoutePolicy = { ...DEFAULTS, ...input };
  const idempotent = policy.idempotent ? [Idempotent({ secret: policy.idempotent === 'same-key' })] : [];
  return applyDecorators(
    RouteConfig({ policy } satisfies FastifyContextConfig),
    ApiExtension(POLICY_EXTENSION, policy),
    ...idempotent,
  );
}

const PublicRoute = DiscoveryService.createDecorator<string>();

/** No API key, not rate-limited (health checks, the front door); outside the global prefix. */
export function PublicGet(path: string): MethodDecorator {
  return applyDecorators(Get(path), PublicRoute(path), RouteConfig({ public: true } satisfies FastifyContextConfig));
}

/** The paths of the @PublicGet routes, which the global prefix leaves out. */
export function publicPathsOf(controllers: Type[]): string[] {
  return controllers.flatMap((controller) =>
    Object.getOwnPropertyNames(controller.prototype)
      .map((name) => Reflect.getMetadata(PublicRoute.KEY, controller.prototype[name]) as string | undefined)
      .filter((path): path is string => path !== undefined),
  );
}
