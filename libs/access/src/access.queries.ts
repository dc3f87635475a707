import { raw, Sql, sql } from '@app/database';
import type { Plan } from './account.entity';
import type { ApiKeyEntity } from './api-key.entity';
import type { Scope } from './scopes';

// Every statement of the access library (accounts, API keys, quotas). A statement whose text numbers its
// parameters ($2 twice, $2 before $1) is `new Sql([text], values)`: `values[i]` is `$${i + 1}`, the text unchanged.

const ACCOUNT_COLUMNS = raw(`id, name, plan, limit_per_minute AS "limitPerMinute", limit_per_day AS "limitPerDay",
  created_at AS "createdAt"`);

export interface NewAccountRow {
  name: string;
  plan: Plan;
  limitPerMinute: number | null;
  limitPerDay: number | null;
}

export const accountQueries = {
  insert: (a: NewAccountRow) =>
    sql`INSERT INTO accounts (name, plan, limit_per_minute, limit_per_day) VALUES (${a.name}, ${a.plan}, ${a.limitPerMinute}, ${a.limitPerDay})
         RETURNING ${ACCOUNT_COLUMNS}`,
  setPlan: (accountId: number, a: Omit<NewAccountRow, 'name'>) =>
    new Sql(
      [
        `UPDATE accounts SET plan = $2, limit_per_minute = $3, limit_per_day = $4 WHERE id = $1
       RETURNING ${ACCOUNT_COLUMNS.text}`,
      ],
      [accountId, a.plan, a.limitPerMinute, a.limitPerDay],
    ),
  page: (afterId: number, limit: number) =>
    sql`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`,
  get: (accountId: number) => sql`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ${accountId}`,
  count: () => sql`SELECT count(*)::int AS count FROM accounts`,
  lockPlan: (accountId: number) => sql`SELECT plan FROM accounts WHERE id = ${accountId} FOR UPDATE`,
  // NO KEY UPDATE leaves alone the key-share locks that inserts of the account's other rows take.
  lockForKeys: (accountId: number) => sql`SELECT 1 FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`,
};

const KEY_COLUMNS = `k.id, k.account_id AS "accountId", k.name, k.prefix, k.key_hash AS "keyHash", k.scopes,
  k.expires_at AS "expiresAt", k.revoked_at AS "revokedAt", k.rotated_out_at AS "rotatedOutAt",
  k.last_used_at AS "lastUsedAt", k.created_at AS "createdAt"`;
export type ApiKeyRow = Omit<ApiKeyEntity, 'tagged'>;

/** Keys usable at the parameter numbered `now`. */
const ACTIVE = (now: string) =>
  `k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now}) AND (k.rotated_out_at IS NULL OR k.rotated_out_at > ${now})`;

const MANAGER = (now: string) =>
  `'admin' = ANY(k.scopes) AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now}) AND k.rotated_out_at IS NULL`;

export interface NewApiKeyRow {
  name: string;
  prefix: string;
  keyHash: string;
  scopes: Scope[];
  expiresAt: Date | null;
}

export const apiKeyQueries = {
  activeOfAccount: (accountId: number, now: Date) =>
    new Sql(
      [`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.account_id = $1 AND ${ACTIVE('$2')} ORDER BY k.id`],
      [accountId, now],
    ),
  /** Revoked, expired and rotated-out keys too. */
  allOfAccount: (accountId: number) =>
    sql`SELECT ${raw(KEY_COLUMNS)} FROM api_keys k WHERE k.account_id = ${accountId} ORDER BY k.id`,
  exists: (accountId: number, keyId: number) =>
    sql`SELECT 1 FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId}`,
  countActiveLegacy: (now: Date) =>
    new Sql([`SELECT count(*) AS n FROM api_keys k WHERE NOT k.tagged AND ${ACTIVE('$1')}`], [now]),
  /** Live prefixes of keys issued before tags. */
  legacyPrefixes: () =>
    sql`SELECT DISTINCT prefix FROM api_keys
          WHERE NOT tagged AND revoked_at IS NULL
            AND (expires_at IS NULL OR expires_at > now()) AND (rotated_out_at IS NULL OR rotated_out_at > now())`,
  unrevokedHashes: (accountId: number) =>
    sql`SELECT key_hash AS hash FROM api_keys WHERE account_id = ${accountId} AND revoked_at IS NULL`,
  activeById: (accountId: number, keyId: number, now: Date) =>
    new Sql(
      [`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.id = $1 AND k.account_id = $2 AND ${ACTIVE('$3')}`],
      [keyId, accountId, now],
    ),
  lockActive: (accountId: number, keyId: number, now: Date) =>
    new Sql(
      [`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.id = $1 AND k.account_id = $2 AND ${ACTIVE('$3')} FOR UPDATE`],
      [keyId, accountId, now],
    ),
  /** Another key of the account able to manage keys. */
  otherManager: (accountId: number, keyId: number, now: Date) =>
    new Sql(
      [`SELECT 1 FROM api_keys k WHERE k.account_id = $1 AND k.id <> $2 AND ${MANAGER('$3')} LIMIT 1`],
      [accountId, keyId, now],
    ),
  insert: (accountId: number, k: NewApiKeyRow) =>
    sql`INSERT INTO api_keys AS k (account_id, name, prefix, key_hash, scopes, expires_at, tagged)
       VALUES (${accountId}, ${k.name}, ${k.prefix}, ${k.keyHash}, ${k.scopes}, ${k.expiresAt}, true) RETURNING ${raw(KEY_COLUMNS)}`,
  revoke: (keyId: number, at: Date) => new Sql([`UPDATE api_keys SET revoked_at = $2 WHERE id = $1`], [keyId, at]),
  rotateOut: (keyId: number, at: Date) =>
    new Sql([`UPDATE api_keys SET rotated_out_at = $2 WHERE id = $1`], [keyId, at]),
  /** What authenticates a key, by its hash. */
  authContext: (keyHash: string) =>
    sql`SELECT k.id AS "keyId", k.account_id AS "accountId", k.scopes, k.expires_at AS "expiresAt",
              k.rotated_out_at AS "rotatedOutAt", k.revoked_at AS "revokedAt",
              a.plan, a.limit_per_minute AS "limitPerMinute", a.limit_per_day AS "limitPerDay"
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = ${keyHash}`,
  /** Never moves a key's last use back. */
  touchLastUsed: (keyIds: readonly number[], usedAt: readonly string[]) =>
    sql`UPDATE api_keys k SET last_used_at = v.t
           FROM unnest(${keyIds}::bigint[], ${usedAt}::timestamptz[]) AS v(id, t)
          WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.t)`,
};

export const quotaQueries = {
  /** Rotated-out keys count until their grace ends (they still authenticate). */
  keys: (accountId: number, now: Date) =>
    new Sql(
      [
        `SELECT count(*)::int AS n FROM api_keys
          WHERE account_id = $1 AND revoked_at IS NULL AND (rotated_out_at IS NULL OR rotated_out_at > $2)
            AND (expires_at IS NULL OR expires_at > $2)`,
      ],
      [accountId, now],
    ),
  webhooks: (accountId: number) => sql`SELECT count(*)::int AS n FROM webhooks WHERE account_id = ${accountId}`,
};
