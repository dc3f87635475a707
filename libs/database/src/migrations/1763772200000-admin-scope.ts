import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `admin` scope: key management moves out of `write`. Existing keys keep what they had,
 * except that in each account one key keeps managing keys, so no owner is locked out: the
 * account's oldest working key with `write`, a non-expiring one if there is any (so the key
 * `account:create` made, unless it was revoked or rotated). The others lose key management.
 */
export class AdminScope1763772200000 implements MigrationInterface {
  name = 'AdminScope1763772200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check`);
    await q.query(`
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
        CHECK (scopes <@ ARRAY['read', 'write', 'admin']::text[] AND cardinality(scopes) > 0)`);
    await q.query(`
      UPDATE api_keys SET scopes = scopes || ARRAY['admin']
      WHERE id IN (
        SELECT DISTINCT ON (account_id) id FROM api_keys
        WHERE 'write' = ANY(scopes) AND revoked_at IS NULL AND rotated_out_at IS NULL
          AND (expires_at IS NULL OR expires_at > now())
        ORDER BY account_id, expires_at DESC NULLS FIRST, id
      )`);
  }

  /** Back to read/write: keys that had only `admin` cannot exist there, so they are revoked. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()), scopes = ARRAY['read']
      WHERE scopes = ARRAY['admin']`);
    await q.query(`UPDATE api_keys SET scopes = array_remove(scopes, 'admin') WHERE 'admin' = ANY(scopes)`);
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check`);
    await q.query(`
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
        CHECK (scopes <@ ARRAY['read', 'write']::text[] AND cardinality(scopes) > 0)`);
  }
}
