import { DataSource } from 'typeorm';
import { preparedQuery, sql } from '@app/database';
import { ADMIN_EVENT_TYPES } from '@app/events';
import { ADMIN_ONLY_WEBHOOK, isAdminOnlyWebhook, Webhook, webhookDeliveryQueries, webhookQueries } from '@app/webhooks';
import { ServiceFactory } from './service.factory';

/** Each receives webhook.disabled (so the fan-out can reach it) and none, one or every admin event type. */
const EVENT_SETS: string[][] = [
  ['webhook.disabled'],
  ['webhook.disabled', 'pet.created'],
  ...ADMIN_EVENT_TYPES.map((t) => ['webhook.disabled', t]),
  ['webhook.disabled', ...ADMIN_EVENT_TYPES],
];

/** The one admin-only webhook rule: its SQL (ADMIN_ONLY_WEBHOOK, in `list` and the fan-out) and isAdminOnlyWebhook agree. */
describe('the admin-only webhook rule (service tier: Postgres)', () => {
  let factory: ServiceFactory;
  let db: DataSource;
  let accountId: number;
  let hooks: Webhook[];
  const ids = (ws: readonly Pick<Webhook, 'id'>[]) => ws.map((w) => String(w.id)).sort();

  beforeAll(async () => {
    factory = await ServiceFactory.start();
    db = factory.db;
    accountId = await factory.account();
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
  afterAll(() => factory?.close());

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
      [true, false].map((only) => factory.event(accountId, { type: 'webhook.disabled', adminOnly: only })),
    );
    const made = await factory.fanOut(accountId, [adminOnly, shared]);
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
