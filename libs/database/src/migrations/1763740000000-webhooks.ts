import { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhooks and their deliveries (one row per event and webhook, so a repeated fan-out adds nothing). */
export class Webhooks1763740000000 implements MigrationInterface {
  name = 'Webhooks1763740000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        url text NOT NULL CHECK (length(url) <= 2048),
        events text[] NOT NULL CHECK (cardinality(events) > 0),
        secret text NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
        disabled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhooks_account_id ON webhooks (account_id, id)`);
    // Deleting a webhook deletes its deliveries: their queued jobs then find nothing to send.
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        webhook_id bigint NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        event_id bigint REFERENCES events(id) ON DELETE CASCADE,
        event_type text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        last_status_code integer,
        last_error text,
        last_attempt_at timestamptz,
        next_attempt_at timestamptz,
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries (webhook_id, event_id)`);
    await q.query(`CREATE INDEX webhook_deliveries_webhook_id ON webhook_deliveries (webhook_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhooks`);
  }
}
