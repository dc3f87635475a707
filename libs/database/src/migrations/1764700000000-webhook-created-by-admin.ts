import { MigrationInterface, QueryRunner } from 'typeorm';

// A webhook an `admin` key made is the admin keys' alone (issue 43). Who made the existing ones was not recorded:
// they count as made without `admin` (those receiving api_key.* events are admin-only by their events anyway).
export class WebhookCreatedByAdmin1764700000000 implements MigrationInterface {
  name = 'WebhookCreatedByAdmin1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN created_by_admin boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN created_by_admin`);
  }
}
