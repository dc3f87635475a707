import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { preparedQuery, sql } from '@app/database';
import { ADMIN_EVENT_TYPES } from '@app/events';
import {
  ADMIN_ONLY_WEBHOOK,
  FannedOutDelivery,
  isAdminOnlyWebhook,
  Webhook,
  webhookDeliveryQueries,
  webhookQueries,
} from '@app/webhooks';
import { featureModules, newAccount } from './feature-modules';

/** Each receives webhook.disabled (so the fan-out can reach it) and none, one or every admin event type. */
const EVENT_SETS: string[][] = [
  ['webhook.disabled'],
  ['webhook.disabled', 'pet.created'],
  ...ADMIN_EVENT_TYPES.map((t) => ['webhook.disabled', t]),
  ['webhook.disabled', ...ADMIN_EVENT_TYPES],
];

/** The one admin-only webhook rule: its SQL (ADMIN_ONLY_WEBHOOK, in `list` and the fan-out) and isAdminOnlyWebhook agree. */
describe('the admin-only webhook rule (service tier: Postgres)', () => {
  let app: INestApplicationContext;
  let db: DataSource;
  let accountId: number;
  let hooks: Webhook[];
  const ids = (ws: readonly Pick<Webhook, 'id'>[]) => ws.map((w) => String(w.id)).sort();

  beforeAll(async () => {
    app = await featureModules();
    db = app.get(DataSource);
    accountId = await newAccount(app);
    hooks = [];
    for (const createdByAdmin of [false, true]) {
      for (const events of EVENT_SETS) {
        const row = { url: 'https://example.com/hook', events, description: null, secret: 'x', createdByAdmin };
        hooks.push(...(await preparedQuery<Webhook>(db, webhookQueries.insert(accountId, row))));
      }
    }
    // Both answers occur, for each value of created_by_admin.
    expect(new Set(hooks.map((w) => `${w.createdByAdmin} ${isAdminOnlyWebhook(w)}`)).size).toBe(3);
  });
  afterAll(() => app?.close());

  it('the SQL fragment says of every webhook what isAdminOnlyWebhook says', async () => {
    const rows = await preparedQuery<{ id: string; adminOnly: boolean }>(
      db,
      sql`SELECT w.id::text AS id, ${ADMIN_ONLY_WEBHOOK} AS "adminOnly" FROM webhooks w WHERE w.account_id = ${accountId} ORDER BY w.id`,
    );
    expect(rows).toEqual(hooks.map((w) => ({ id: String(w.id), adminOnly: isAdminOnlyWebhook(w) })));
  });

  it('list hides from a non-admin key exactly the webhooks isAdminOnlyWebhook names, and shows an admin key all', async () => {
    const forOthers = await preparedQuery<Webhook>(db, webhookQueries.list(accountId, false));
    const forAdmin = await preparedQuery<Webhook>(db, webhookQueries.list(accountId, true));
    expect(ids(forOthers)).toEqual(ids(hooks.filter((w) => !isAdminOnlyWebhook(w))));
    expect(ids(forAdmin)).toEqual(ids(hooks));
  });

  it('the fan-out sends an admin-only event only to the webhooks isAdminOnlyWebhook names, another event to all', async () => {
    const [adminOnly, shared] = await Promise.all(
      [true, false].map(async (only) => {
        const [{ id }] = await db.query(
          `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out, admin_only)
           VALUES ($1, 'webhook.disabled', 'webhook', $2, 1, '{}', false, $3) RETURNING id::text`,
          [accountId, `rule-${only}`, only],
        );
        return Number(id);
      }),
    );
    const made = await preparedQuery<FannedOutDelivery>(
      db,
      webhookDeliveryQueries.fanOut({
        eventIds: [adminOnly, shared],
        accountIds: [accountId, accountId],
        traceparents: [null, null],
      }),
    );
    const to = (eventId: number) => made.filter((d) => Number(d.eventId) === eventId).map((d) => ({ id: d.webhookId }));
    expect(ids(to(adminOnly))).toEqual(ids(hooks.filter(isAdminOnlyWebhook)));
    expect(ids(to(shared))).toEqual(ids(hooks));
  });

  it('both statements bind the admin event types as a parameter, inlining none', () => {
    const statements = [
      webhookQueries.list(1, false),
      webhookDeliveryQueries.fanOut({ eventIds: [1], accountIds: [1], traceparents: [null] }),
      webhookDeliveryQueries.fanOutPending(1, 10),
    ];
    for (const q of statements) {
      expect(q.values).toContainEqual(ADMIN_EVENT_TYPES);
      expect(q.text).not.toContain('api_key.');
    }
  });
});
