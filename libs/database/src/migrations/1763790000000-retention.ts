import { MigrationInterface, QueryRunner } from 'typeorm';

// A batch reads only the finished rows it removes; an event's cascade finds its deliveries by event_id (the unique
// index leads with webhook_id).
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
