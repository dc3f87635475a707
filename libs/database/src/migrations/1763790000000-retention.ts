import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention removes finished records oldest first: each source's partial index over its finished
 * rows by age lets a batch read only what it removes. Removing an event cascades to its
 * deliveries, found by event_id (the unique index leads with webhook_id and cannot serve that).
 * Built CONCURRENTLY, outside a transaction.
 */
export class Retention1763790000000 implements MigrationInterface {
  name = 'Retention1763790000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_finished_age ON messages (created_at)
        WHERE status IN ('processed', 'failed')`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS events_fanned_out_age ON events (created_at) WHERE fanned_out`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_finished_age ON webhook_deliveries (created_at)
        WHERE status <> 'pending'`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_event_id ON webhook_deliveries (event_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_event_id`);
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_finished_age`);
    await q.query(`DROP INDEX IF EXISTS events_fanned_out_age`);
    await q.query(`DROP INDEX IF EXISTS messages_finished_age`);
  }
}
