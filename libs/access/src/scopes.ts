/** The scopes a key can hold; a new one is added here, with its rule. */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What each scope lets a key do and the scopes it implies (`write` implies `read`, as at GitHub and
 * Stripe). The gate decides with it and the published document describes it.
 */
export const SCOPE_RULES: Record<Scope, { grants: string; implies: readonly Scope[] }> = {
  read: { grants: "reads the account's data", implies: [] },
  write: { grants: 'changes it', implies: ['read'] },
  admin: { grants: 'manages keys', implies: [] },
};

/** Whether a key holding `held` may call a route that needs `needed` (`any`: every key of the account). */
export function scopesAllow(held: readonly Scope[], needed: Scope | 'any'): boolean {
  return needed === 'any' || held.some((s) => s === needed || SCOPE_RULES[s].implies.includes(needed));
}
