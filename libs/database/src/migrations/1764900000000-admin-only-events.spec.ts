import { Client } from 'pg';
import { loadConfig } from '@app/config';
import { unitDatabase } from '@app/testing';
import { maintenanceUrl, migrate } from '../ensure-database';

const MIGRATION = 'AdminOnlyEvents1764900000000';

/** On a database of its own, put back as the release before it left it, with events recorded then. */
describe(`migration ${MIGRATION}`, () => {
  const own = unitDatabase('admin_only_events');
  const config = loadConfig({ DATABASE_URL: own.url });
  let db: Client;

  beforeAll(async () => {
    const admin = new Client({ connectionString: maintenanceUrl(config.databaseUrl) });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${own.name}" WITH (FORCE)`);
    await admin.end();
    await migrate(config);
    db = new Client({ connectionString: own.url });
    await db.connect();
    await db.query(`ALTER TABLE events DROP COLUMN admin_only`);
    await db.query(`DELETE FROM migrations WHERE name = $1`, [MIGRATION]);
  });
  afterAll(() => db?.end());

  it('marks admin-only the webhook.disabled events of webhooks receiving api_key.* events or made by an admin key', async () => {
    const { rows } = await db.query(`INSERT INTO accounts (name, plan) VALUES ('old events', 'business') RETURNING id`);
    const account = rows[0].id as string;
    const webhook = async (createdByAdmin: boolean) =>
      Number(
        (
          await db.query(
            `INSERT INTO webhooks (account_id, url, events, secret, created_by_admin)
             VALUES ($1, 'https://x.example/', '{pet.created}', 'sealed', $2) RETURNING id`,
            [account, createdByAdmin],
          )
        ).rows[0].id,
      );
    const event = async (type: string, resourceId: number, events: string[]) =>
      Number(
        (
          await db.query(
            `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data)
             VALUES ($1, $2, 'webhook', $3, 1, $4) RETURNING id`,
            [account, type, String(resourceId), { id: resourceId, events }],
          )
        ).rows[0].id,
      );
    const adminMade = await webhook(true);
    const ordinary = await webhook(false);
    // Its webhook deleted since: known by the events it received.
    const byEvents = await event('webhook.disabled', ordinary + 1000, ['api_key.revoked', 'pet.created']);
    const byMaker = await event('webhook.disabled', adminMade, ['pet.created']);
    const plain = await event('webhook.disabled', ordinary, ['pet.created']);
    const otherType = await event('pet.created', adminMade, ['api_key.revoked']);

    expect(await migrate(config)).toEqual([MIGRATION]);
    const marked = await db.query(`SELECT id, admin_only FROM events ORDER BY id`);
    expect(marked.rows.map((r: { id: string; admin_only: boolean }) => [Number(r.id), r.admin_only])).toEqual([
      [byEvents, true],
      [byMaker, true],
      [plain, false],
      [otherType, false],
    ]);
  });
});
