/** `read`: GET only; `write`: everything but key management; `admin`: key management (GET/POST /keys...). */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** An API key: only its SHA-256 hash and a short display prefix are stored, never the secret. */
export interface ApiKey {
  id: number;
  accountId: number;
  name: string;
  prefix: string;
  keyHash: string;
  scopes: Scope[];
  expiresAt: Date | null;
  revokedAt: Date | null;

  /** Set when the key is rotated: it keeps working until this instant (the grace period). */
  rotatedOutAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
}
