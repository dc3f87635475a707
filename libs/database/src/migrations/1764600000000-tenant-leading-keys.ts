import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The history tables whose primary key was the id alone; the account index the new key replaces; for time-ordered
 * ids, the BRIN index retention's probe for a young row reads instead of the newest id.
 */
const TABLES: { table: string; accountIndex?: string; createdAtBrin?: string }[] = [
  { table: 'messages', accountIndex: 'messages_account_id' },
  { table: 'events', accountIndex: 'events_account_id', createdAtBrin: 'events_created_at_brin' },
  { table: 'webhook_deliveries', createdAtBrin: 'webhook_deliveries_created_at_brin' },
];

// A key of the id alone let Postgres walk it from a partition's start to a deep feed cursor when one tenant fills
// the partition; led by the account, the key serves the feed and every read by id, and is the distribution key's
// shape (docs/internals/decisions/0021-tenant-leading-keys.md). Each partition's index is rebuilt under a lock: docs/storage.md.
export class TenantLeadingKeys1764600000000 implements MigrationInterface {
  name = 'TenantLeadingKeys1764600000000';

  async up(q: QueryRunner): Promise<void> {
    for (const { table, accountIndex, createdAtBrin } of TABLES) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey`);
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (account_id, id)`);
      if (accountIndex) await q.query(`DROP INDEX ${accountIndex}`);
      if (createdAtBrin) await q.query(`CREATE INDEX ${createdAtBrin} ON ${table} USING brin (created_at)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table, accountIndex, createdAtBrin } of [...TABLES].reverse()) {
      if (createdAtBrin) await q.query(`DROP INDEX ${createdAtBrin}`);
      if (accountIndex) await q.query(`CREATE INDEX ${accountIndex} ON ${table} (account_id, id)`);
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey`);
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (id)`);
    }
  }
}
