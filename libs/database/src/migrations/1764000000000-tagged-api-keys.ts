import { MigrationInterface, QueryRunner } from 'typeorm';

// Keys issued from now on carry an HMAC tag; older ones stay valid until revoked. Each API replica holds the live
// untagged keys' prefixes (this partial index) to refuse forged keys without a lookup.
export class TaggedApiKeys1764000000000 implements MigrationInterface {
  name = 'TaggedApiKeys1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN tagged boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE INDEX api_keys_live_legacy_prefix ON api_keys (prefix) WHERE NOT tagged AND revoked_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX api_keys_live_legacy_prefix`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN tagged`);
  }
}
