import { MigrationInterface, QueryRunner } from 'typeorm';

// Key management moves from `write` to `admin`; one key per account keeps it, so no owner is locked out: the oldest
// working `write` key, a non-expiring one first (the one `account:create` made, unless revoked or rotated).
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

  /** Keys that had only `admin` cannot exist in read/write, so they are revoked. */
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
