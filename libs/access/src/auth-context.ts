import type { Plan } from './account.entity';
import type { Scope } from './scopes';

export interface AuthContext {
  accountId: number;
  keyId: number;
  scopes: Scope[];
  plan: Plan;
  limitPerMinute: number | null;
  limitPerDay: number | null;
  expiresAt: Date | null;
  rotatedOutAt: Date | null;
  revokedAt: Date | null;
}

export const AUTH_INVALIDATION_CHANNEL = 'auth-invalidate';

/** Published whenever a key or an account's plan changes; `keyId` beside `keyHash` tells open streams whose key. */
export interface AuthInvalidation {
  accountId?: number;
  keyHash?: string;
  keyId?: number;
}

export type KeyUnusable = 'revoked' | 'expired' | 'rotated_out';

/** Why the key no longer works, if it does not. */
export function unusableBecause(ctx: AuthContext, nowMs: number): KeyUnusable | undefined {
  if (ctx.revokedAt) return 'revoked';
  if (ctx.expiresAt && ctx.expiresAt.getTime() <= nowMs) return 'expired';
  if (ctx.rotatedOutAt && ctx.rotatedOutAt.getTime() <= nowMs) return 'rotated_out';
  return undefined;
}

export function isUsable(ctx: AuthContext, nowMs: number): boolean {
  return unusableBecause(ctx, nowMs) === undefined;
}

/** When the key stops working by itself (expiry, or its rotation's grace), in ms; undefined: never. */
export function usableUntil(ctx: Pick<AuthContext, 'expiresAt' | 'rotatedOutAt'>): number | undefined {
  const ends = [ctx.expiresAt, ctx.rotatedOutAt].filter((d): d is Date => d !== null).map((d) => d.getTime());
  return ends.length ? Math.min(...ends) : undefined;
}
