import { MigrationInterface, QueryRunner } from 'typeorm';

// Partial indexes over the few open rows, so a sweep pass reads those instead of tables that only grow; built
// CONCURRENTLY so a deploy onto a large database does not block writes. Existing events count as fanned out.
export class LostJobSweep1763760000000 implements MigrationInterface {
  name = 'LostJobSweep1763760000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    // A constant default: a catalogue change, no table rewrite.
    await q.query(`ALTER TABLE events ADD COLUMN IF NOT EXISTS fanned_out boolean NOT NULL DEFAULT true`);
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS events_not_fanned_out ON events (id) WHERE NOT fanned_out`);
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_unfinished ON messages (id) WHERE status IN ('queued', 'processing')`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_pending ON webhook_deliveries (id) WHERE status = 'pending'`,
    );
  }

  // Plain DROP: TypeORM reverts inside a transaction whatever `transaction` says, and dropping is quick.
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_pending`);
    await q.query(`DROP INDEX IF EXISTS messages_unfinished`);
    await q.query(`DROP INDEX IF EXISTS events_not_fanned_out`);
    await q.query(`ALTER TABLE events DROP COLUMN IF EXISTS fanned_out`);
  }
}
