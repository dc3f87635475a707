import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The lost-job sweep reads open rows in the order they became due, from a cursor, and only
 * those already due: each source's partial index is keyed by (due time, id). They replace the
 * id-only partial indexes, which made a pass read every open row not yet due (a large backlog
 * in hand, or deliveries waiting for their retry). Orders have had theirs since the store
 * migration. Built CONCURRENTLY, outside a transaction, as in the first sweep migration.
 */
export class SweepByDueTime1763780000000 implements MigrationInterface {
  name = 'SweepByDueTime1763780000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_unfinished_due ON messages (created_at, id)
        WHERE status IN ('queued', 'processing')`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS events_not_fanned_out_due ON events (created_at, id) WHERE NOT fanned_out`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_pending_due
        ON webhook_deliveries ((coalesce(next_attempt_at, created_at)), id) WHERE status = 'pending'`,
    );
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS messages_unfinished`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS events_not_fanned_out`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_pending`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS webhook_deliveries_pending ON webhook_deliveries (id) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX IF NOT EXISTS events_not_fanned_out ON events (id) WHERE NOT fanned_out`);
    await q.query(`CREATE INDEX IF NOT EXISTS messages_unfinished ON messages (id) WHERE status IN ('queued', 'processing')`);
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_pending_due`);
    await q.query(`DROP INDEX IF EXISTS events_not_fanned_out_due`);
    await q.query(`DROP INDEX IF EXISTS messages_unfinished_due`);
  }
}
