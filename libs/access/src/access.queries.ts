import { columns, FOUND, raw, sql } from '@app/database';
import type { AuthContext } from './auth-context';
import type { AccountEntity, Plan } from './account.entity';
import type { ApiKeyEntity } from './api-key.entity';
import type { Scope } from './scopes';

// Every statement of the access library (accounts, API keys, quotas).

const ACCOUNT_COLUMNS = raw(`id, name, plan, limit_per_minute AS "limitPerMinute", limit_per_day AS "limitPerDay",
  created_at AS "createdAt"`);
const ACCOUNT_ROW = columns<AccountEntity>({
  id: true,
  name: true,
  plan: true,
  limitPerMinute: true,
  limitPerDay: true,
  createdAt: true,
});

export interface NewAccountRow {
  name: string;
  plan: Plan;
  limitPerMinute: number | null;
  limitPerDay: number | null;
}

export const accountQueries = {
  insert: (a: NewAccountRow) =>
    sql`INSERT INTO accounts (name, plan, limit_per_minute, limit_per_day) VALUES (${a.name}, ${a.plan}, ${a.limitPerMinute}, ${a.limitPerDay})
         RETURNING ${ACCOUNT_COLUMNS}`.returns(ACCOUNT_ROW),
  setPlan: (accountId: number, a: Omit<NewAccountRow, 'name'>) =>
    sql`UPDATE accounts SET plan = ${a.plan}, limit_per_minute = ${a.limitPerMinute}, limit_per_day = ${a.limitPerDay}
         WHERE id = ${accountId}
       RETURNING ${ACCOUNT_COLUMNS}`.returns(ACCOUNT_ROW),
  page: (afterId: number, limit: number) =>
    sql`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`.returns(ACCOUNT_ROW),
  get: (accountId: number) => sql`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ${accountId}`.returns(ACCOUNT_ROW),
  count: () => sql`SELECT count(*)::int AS count FROM accounts`.returns<{ count: number }>({ count: true }),
  lockPlan: (accountId: number) =>
    sql`SELECT plan FROM accounts WHERE id = ${accountId} FOR UPDATE`.returns<{ plan: Plan }>({ plan: true }),
  // NO KEY UPDATE leaves alone the key-share locks that inserts of the account's other rows take.
  lockForKeys: (accountId: number) =>
    sql`SELECT 1 AS found FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`.returns(FOUND),
};

const KEY_COLUMNS = raw(`k.id, k.account_id AS "accountId", k.name, k.prefix, k.key_hash AS "keyHash", k.scopes,
  k.expires_at AS "expiresAt", k.revoked_at AS "revokedAt", k.rotated_out_at AS "rotatedOutAt",
  k.last_used_at AS "lastUsedAt", k.created_at AS "createdAt"`);
export type ApiKeyRow = Omit<ApiKeyEntity, 'tagged'>;
const KEY_ROW = columns<ApiKeyRow>({
  id: true,
  accountId: true,
  name: true,
  prefix: true,
  keyHash: true,
  scopes: true,
  expiresAt: true,
  revokedAt: true,
  rotatedOutAt: true,
  lastUsedAt: true,
  createdAt: true,
});

/** Keys usable at `now`, for an api_keys table aliased `k`. */
const ACTIVE = (now: Date) =>
  sql`k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now}) AND (k.rotated_out_at IS NULL OR k.rotated_out_at > ${now})`;

const MANAGER = (now: Date) =>
  sql`'admin' = ANY(k.scopes) AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now}) AND k.rotated_out_at IS NULL`;

export interface NewApiKeyRow {
  name: string;
  prefix: string;
  keyHash: string;
  scopes: Scope[];
  expiresAt: Date | null;
}

export const apiKeyQueries = {
  activeOfAccount: (accountId: number, now: Date) =>
    sql`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.account_id = ${accountId} AND ${ACTIVE(now)} ORDER BY k.id`.returns(
      KEY_ROW,
    ),
  /** Revoked, expired and rotated-out keys too. */
  allOfAccount: (accountId: number) =>
    sql`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.account_id = ${accountId} ORDER BY k.id`.returns(KEY_ROW),
  exists: (accountId: number, keyId: number) =>
    sql`SELECT 1 AS found FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId}`.returns(FOUND),
  countActiveLegacy: (now: Date) =>
    sql`SELECT count(*) AS n FROM api_keys k WHERE NOT k.tagged AND ${ACTIVE(now)}`.returns<{ n: string }>({ n: true }),
  /** Live prefixes of keys issued before tags. */
  legacyPrefixes: () =>
    sql`SELECT DISTINCT prefix FROM api_keys
          WHERE NOT tagged AND revoked_at IS NULL
            AND (expires_at IS NULL OR expires_at > now()) AND (rotated_out_at IS NULL OR rotated_out_at > now())`.returns<{
      prefix: string;
    }>({ prefix: true }),
  unrevokedHashes: (accountId: number) =>
    sql`SELECT key_hash AS hash FROM api_keys WHERE account_id = ${accountId} AND revoked_at IS NULL`.returns<{
      hash: string;
    }>({ hash: true }),
  activeById: (accountId: number, keyId: number, now: Date) =>
    sql`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.id = ${keyId} AND k.account_id = ${accountId} AND ${ACTIVE(now)}`.returns(
      KEY_ROW,
    ),
  lockActive: (accountId: number, keyId: number, now: Date) =>
    sql`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.id = ${keyId} AND k.account_id = ${accountId} AND ${ACTIVE(now)} FOR UPDATE`.returns(
      KEY_ROW,
    ),
  /** Another key of the account able to manage keys. */
  otherManager: (accountId: number, keyId: number, now: Date) =>
    sql`SELECT 1 AS found FROM api_keys k WHERE k.account_id = ${accountId} AND k.id <> ${keyId} AND ${MANAGER(now)} LIMIT 1`.returns(
      FOUND,
    ),
  insert: (accountId: number, k: NewApiKeyRow) =>
    sql`INSERT INTO api_keys AS k (account_id, name, prefix, key_hash, scopes, expires_at, tagged)
       VALUES (${accountId}, ${k.name}, ${k.prefix}, ${k.keyHash}, ${k.scopes}, ${k.expiresAt}, true) RETURNING ${KEY_COLUMNS}`.returns(
      KEY_ROW,
    ),
  revoke: (keyId: number, at: Date) => sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${keyId}`,
  rotateOut: (keyId: number, at: Date) => sql`UPDATE api_keys SET rotated_out_at = ${at} WHERE id = ${keyId}`,
  /** What authenticates a key, by its hash. */
  authContext: (keyHash: string) =>
    sql`SELECT k.id AS "keyId", k.account_id AS "accountId", k.scopes, k.expires_at AS "expiresAt",
              k.rotated_out_at AS "rotatedOutAt", k.revoked_at AS "revokedAt",
              a.plan, a.limit_per_minute AS "limitPerMinute", a.limit_per_day AS "limitPerDay"
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = ${keyHash}`.returns<AuthContext>({
      keyId: true,
      accountId: true,
      scopes: true,
      expiresAt: true,
      rotatedOutAt: true,
      revokedAt: true,
      plan: true,
      limitPerMinute: true,
      limitPerDay: true,
    }),
  /** Never moves a key's last use back. */
  touchLastUsed: (keyIds: readonly number[], usedAt: readonly string[]) =>
    sql`UPDATE api_keys k SET last_used_at = v.t
           FROM unnest(${keyIds}::bigint[], ${usedAt}::timestamptz[]) AS v(id, t)
          WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.t)`,
};

const COUNT_ROW = columns<{ n: number }>({ n: true });

export const quotaQueries = {
  /** Rotated-out keys count until their grace ends (they still authenticate). */
  keys: (accountId: number, now: Date) =>
    sql`SELECT count(*)::int AS n FROM api_keys
          WHERE account_id = ${accountId} AND revoked_at IS NULL AND (rotated_out_at IS NULL OR rotated_out_at > ${now})
            AND (expires_at IS NULL OR expires_at > ${now})`.returns(COUNT_ROW),
  webhooks: (accountId: number) =>
    sql`SELECT count(*)::int AS n FROM webhooks WHERE account_id = ${accountId}`.returns(COUNT_ROW),
};
