import { MigrationInterface, QueryRunner } from 'typeorm';

// An event only admin keys and admin-only webhooks get whatever its type: webhook.disabled of an admin-only webhook
// holds its url and api_key.* events. A constant default is kept in the catalog: no partition is rewritten. The
// webhook.disabled events recorded before are marked by what they hold, or by who made their webhook if it is left.
export class AdminOnlyEvents1764900000000 implements MigrationInterface {
  name = 'AdminOnlyEvents1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN admin_only boolean NOT NULL DEFAULT false`);
    await q.query(
      `UPDATE events e SET admin_only = true
        WHERE e.type = 'webhook.disabled'
          AND (e.data -> 'events' ?| ARRAY['api_key.created', 'api_key.revoked', 'api_key.rotated', 'api_key.banned']
               OR EXISTS (SELECT 1 FROM webhooks w
                           WHERE w.account_id = e.account_id AND w.id::text = e.resource_id AND w.created_by_admin))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events DROP COLUMN admin_only`);
  }
}
