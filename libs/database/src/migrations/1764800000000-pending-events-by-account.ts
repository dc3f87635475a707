import { MigrationInterface, QueryRunner } from 'typeorm';

// The pending fan-out pages one account's events not fanned out yet: through the (created_at, id) index, which the
// lost-job sweep keeps, each account's page walked every other account's backlog (docs/internals/decisions/0040-webhook-fan-out-by-account.md).
// Built on each partition under a lock, as the tenant-leading keys were: docs/storage.md.
export class PendingEventsByAccount1764800000000 implements MigrationInterface {
  name = 'PendingEventsByAccount1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX events_account_not_fanned_out_due ON events (account_id, created_at, id) WHERE NOT fanned_out`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX events_account_not_fanned_out_due`);
  }
}
