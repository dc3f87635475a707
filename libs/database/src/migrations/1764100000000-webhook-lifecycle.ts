import { MigrationInterface, QueryRunner } from 'typeorm';

// A resend is a new delivery of the event (`resend_of`), so the unique index covers first deliveries only. A worker
// still on the former fan-out statement fails its fan-out jobs (BullMQ retries them) until it is replaced.
export class WebhookLifecycle1764100000000 implements MigrationInterface {
  name = 'WebhookLifecycle1764100000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks
      ADD COLUMN IF NOT EXISTS description text CHECK (length(description) <= 500),
      ADD COLUMN IF NOT EXISTS previous_secret text,
      ADD COLUMN IF NOT EXISTS previous_secret_expires_at timestamptz`);
    await q.query(`ALTER TABLE webhook_deliveries
      ADD COLUMN IF NOT EXISTS resend_of bigint,
      ADD COLUMN IF NOT EXISTS last_duration_ms integer,
      ADD COLUMN IF NOT EXISTS last_response_excerpt text`);
    await q.query(
      `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_first_of_event
        ON webhook_deliveries (webhook_id, event_id) WHERE resend_of IS NULL`,
    );
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_event`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM webhook_deliveries WHERE resend_of IS NOT NULL`);
    await q.query(
      `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (webhook_id, event_id)`,
    );
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_first_of_event`);
    await q.query(`ALTER TABLE webhook_deliveries
      DROP COLUMN resend_of, DROP COLUMN last_duration_ms, DROP COLUMN last_response_excerpt`);
    await q.query(`ALTER TABLE webhooks
      DROP COLUMN description, DROP COLUMN previous_secret, DROP COLUMN previous_secret_expires_at`);
  }
}
