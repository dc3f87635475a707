import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys issued from now on carry an HMAC tag (libs/access/src/api-key-format.ts); the ones
 * before them stay valid until revoked. Each API replica holds the prefixes of the live untagged
 * keys (the partial index serves that read) to refuse forged ones without a lookup.
 */
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
