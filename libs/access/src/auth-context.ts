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

export const AUTH_INVALIDATION_CHANNEL = 'petstore:auth-invalidate';

/** Published whenever a key or an account's plan changes. */
export interface AuthInvalidation {
  accountId?: number;
  keyHash?: string;
}

export function isUsable(ctx: AuthContext, nowMs: number): boolean {
  if (ctx.revokedAt) return false;
  if (ctx.expiresAt && ctx.expiresAt.getTime() <= nowMs) return false;
  if (ctx.rotatedOutAt && ctx.rotatedOutAt.getTime() <= nowMs) return false;
  return true;
}
