import { MigrationInterface, QueryRunner } from 'typeorm';

// No foreign key to webhook_deliveries (to be partitioned by time): retention removes the attempts of deliveries
// gone. The primary key reads one delivery's attempts within its account in order.
export class WebhookDeliveryAttempts1764200000000 implements MigrationInterface {
  name = 'WebhookDeliveryAttempts1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_delivery_attempts (
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        delivery_id bigint NOT NULL,
        attempt integer NOT NULL CHECK (attempt > 0),
        attempted_at timestamptz NOT NULL,
        status_code integer,
        duration_ms integer NOT NULL CHECK (duration_ms >= 0),
        response_excerpt text,
        error text,
        PRIMARY KEY (account_id, delivery_id, attempt)
      )`);
    await q.query(`CREATE INDEX webhook_delivery_attempts_age ON webhook_delivery_attempts (attempted_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_delivery_attempts`);
  }
}
