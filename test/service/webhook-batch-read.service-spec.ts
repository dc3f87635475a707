import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { preparedQuery } from '@app/database';
import { BatchRowToSend, FannedOutDelivery, Webhook, webhookDeliveryQueries, webhookQueries } from '@app/webhooks';
import { featureModules, newAccount } from './feature-modules';

/** A delivery batch's read (webhookDeliveryQueries.batchToSend) against the fan-out that made the batch. */
describe('the delivery batch read (service tier: Postgres)', () => {
  let app: INestApplicationContext;
  let db: DataSource;

  beforeAll(async () => {
    app = await featureModules();
    db = app.get(DataSource);
  });
  afterAll(() => app?.close());

  it("carries the webhook, secret included, on the batch's first row only, the rows in event order", async () => {
    const accountId = await newAccount(app);
    const row = { url: 'https://example.com/hook', events: ['pet.created'], description: null, secret: 's1' };
    const [hook] = await preparedQuery<Webhook>(db, webhookQueries.insert(accountId, { ...row, createdByAdmin: false }));
    const eventIds: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [{ id }] = await db.query(
        `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out)
         VALUES ($1, 'pet.created', 'pet', $2, 1, '{}', false) RETURNING id::text`,
        [accountId, `batch-${i}`],
      );
      eventIds.push(Number(id));
    }
    const made = await preparedQuery<FannedOutDelivery>(
      db,
      webhookDeliveryQueries.fanOut({
        eventIds,
        accountIds: eventIds.map(() => accountId),
        traceparents: eventIds.map(() => null),
      }),
    );
    const rows = await preparedQuery<BatchRowToSend>(
      db,
      webhookDeliveryQueries.batchToSend(accountId, hook.id, made[0].createdAtUs),
    );
    expect(rows.map((r) => Number(r.event?.id))).toEqual(eventIds);
    expect(rows[0].webhook).toEqual(expect.objectContaining({ id: hook.id, url: row.url, secret: 's1' }));
    expect(rows.slice(1).map((r) => r.webhook)).toEqual([null, null]);
  });
});
