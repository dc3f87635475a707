import { MigrationInterface, QueryRunner } from 'typeorm';

// Per API key and UTC minute, rolled up per hour. key_id has no foreign key: a deleted key's history stays with
// its account.
export class Usage1763900000000 implements MigrationInterface {
  name = 'Usage1763900000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, bucket] of [
      ['usage_minutes', 'minute'],
      ['usage_hours', 'hour'],
    ]) {
      await q.query(`
        CREATE TABLE ${table} (
          account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
          ${bucket} timestamptz NOT NULL,
          key_id bigint NOT NULL,
          admitted integer NOT NULL DEFAULT 0,
          refused integer NOT NULL DEFAULT 0,
          bans integer NOT NULL DEFAULT 0,
          PRIMARY KEY (account_id, ${bucket}, key_id)
        )`);
      await q.query(`CREATE INDEX ${table}_age ON ${table} (${bucket})`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS usage_hours`);
    await q.query(`DROP TABLE IF EXISTS usage_minutes`);
  }
}
