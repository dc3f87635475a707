import { preparedQuery } from '@app/database';
import { BatchRowToSend, webhookDeliveryQueries, WebhooksModule } from '@app/webhooks';
import { ServiceFactory } from './service.factory';

/** A delivery batch's read (webhookDeliveryQueries.batchToSend) against the fan-out that made the batch. */
describe('the delivery batch read (service tier: Postgres)', () => {
  let factory: ServiceFactory;

  beforeAll(async () => {
    factory = await ServiceFactory.start(WebhooksModule);
  });
  afterAll(() => factory?.close());

  it("carries the webhook, secret included, on the batch's first row only, the rows in event order", async () => {
    const accountId = await factory.account();
    const hook = await factory.webhook(accountId);
    const [{ secret }] = await factory.db.query('SELECT secret FROM webhooks WHERE id = $1', [hook.id]);
    const eventIds: number[] = [];
    for (let i = 0; i < 3; i++) eventIds.push(await factory.event(accountId));
    const made = await factory.fanOut(accountId, eventIds);
    const rows = await preparedQuery<BatchRowToSend>(
      factory.db,
      webhookDeliveryQueries.batchToSend(accountId, hook.id, made[0].createdAtUs),
    );
    expect(rows.map((r) => Number(r.event?.id))).toEqual(eventIds);
    expect(rows[0].webhook).toEqual(expect.objectContaining({ id: hook.id, url: hook.url, secret }));
    expect(rows.slice(1).map((r) => r.webhook)).toEqual([null, null]);
  });
});
