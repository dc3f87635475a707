import { MigrationInterface, QueryRunner } from 'typeorm';

// Keyed by (due time, id), so a sweep pass reads only rows already due: the id-only indexes made it read every
// open row not yet due (a backlog in hand, deliveries awaiting their retry).
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
