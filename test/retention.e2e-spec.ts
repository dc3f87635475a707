import { INestApplicationContext } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { MaintenanceQueue } from '@app/jobs';
import { expectErrorBody } from './support/expect-error';
import { eventually, HttpClient } from './support/http';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from './support/test-apps';
import { WebhookReceiver } from './support/webhook-receiver';

/** Finished records past their retention are removed by the worker's scheduled job (issue 21). */
describe('retention', () => {
  let api: RunningApi;
  let workers: INestApplicationContext[];
  let receiver: WebhookReceiver;
  let db: DataSource;
  let client: HttpClient;
  let accountId: number;

  const RETENTION = { RETENTION_INTERVAL_MS: '500', ALLOW_PRIVATE_WEBHOOK_URLS: 'true' };

  beforeAll(async () => {
    api = await startApi(RETENTION);
    workers = await Promise.all([startWorker(RETENTION), startWorker(RETENTION)]);
    receiver = await new WebhookReceiver().start();
    db = api.app.get(DataSource);
    const account = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    accountId = account.accountId;
    client = new HttpClient(api.url, account.apiKey);
  });
  afterAll(() => closeAll([...workers.map((w) => () => w.close()), () => api?.close(), () => receiver?.close()]));

  /** Sends messages and waits until they are processed; their ids. */
  async function processedMessages(count: number): Promise<string[]> {
    const ids = (
      await Promise.all(Array.from({ length: count }, (_, i) => client.post('/v1/messages', { message: `r ${i}` })))
    ).map((r) => r.body.id as string);
    await eventually(async () => {
      const [{ open }] = await db.query(
        `SELECT count(*)::int AS open FROM messages WHERE id = ANY($1) AND status <> 'processed'`,
        [ids],
      );
      return open === 0;
    });
    return ids;
  }

  const backdate = (table: string, where: string, params: unknown[], days = 31) =>
    db.query(`UPDATE ${table} SET created_at = now() - make_interval(days => ${days}) WHERE ${where}`, params);

  it('removes processed messages past RETENTION_MESSAGES_DAYS (then 404), with their sequence counters', async () => {
    const [old, fresh] = [await processedMessages(3), await processedMessages(2)];
    await backdate('messages', 'id = ANY($1)', [old]);
    await eventually(async () => {
      const [{ left }] = await db.query(`SELECT count(*)::int AS left FROM messages WHERE id = ANY($1)`, [old]);
      return left === 0;
    });
    expectErrorBody(await client.get(`/v1/messages/${old[0]}`), 404, 'not_found');
    expect((await client.get(`/v1/messages/${fresh[0]}`)).status).toBe(200);
    const [{ counters }] = await db.query(
      `SELECT count(*)::int AS counters FROM event_sequences WHERE resource_type = 'message' AND resource_id = ANY($1)`,
      [old],
    );
    expect(counters).toBe(0);
  });

  it('keeps a message that is not final, however old', async () => {
    const [{ id }] = await db.query(
      `INSERT INTO messages (id, account_id, message, status, attempts, created_at)
       VALUES ('msg_' || substr(md5(random()::text), 1, 28), $1, 'still open', 'queued', 0, now() - interval '90 days')
       RETURNING id`,
      [accountId],
    );
    // Two runs of the job at least.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await db.query(`SELECT 1 FROM messages WHERE id = $1`, [id])).toHaveLength(1);
    await db.query(`DELETE FROM messages WHERE id = $1`, [id]);
  });

  it('removes fanned-out events and finished deliveries past their retention, and keeps orders', async () => {
    expect((await client.post('/v1/webhooks', { url: receiver.url, events: ['order.completed'] })).status).toBe(201);
    const category = (await client.post('/v1/categories', { name: 'retention' })).body.id;
    const pet = (await client.post('/v1/pets', { name: 'retention pet', categoryId: category })).body.id;
    await client.put(`/v1/store/inventory/${pet}`, { quantity: 5 });
    const order = (await client.post('/v1/store/orders', { petId: pet })).body.id;
    await eventually(async () => receiver.requests.length === 1, 20_000);
    const [{ id: event }] = await db.query(
      `SELECT id FROM events WHERE type = 'order.completed' AND resource_id = $1`,
      [String(order)],
    );
    await eventually(async () => {
      const [d] = await db.query(`SELECT status FROM webhook_deliveries WHERE event_id = $1`, [event]);
      return d?.status === 'delivered';
    });
    await backdate('webhook_deliveries', 'event_id = $1', [event]);
    await eventually(
      async () => (await db.query(`SELECT 1 FROM webhook_deliveries WHERE event_id = $1`, [event])).length === 0,
    );
    expect(await db.query(`SELECT 1 FROM events WHERE id = $1`, [event])).toHaveLength(1);

    await backdate('events', 'id = $1', [event]);
    await eventually(async () => (await db.query(`SELECT 1 FROM events WHERE id = $1`, [event])).length === 0);
    const [{ complete }] = await db.query(`SELECT complete FROM orders WHERE id = $1`, [order]);
    expect(complete).toBe(true);
  });

  it('runs from one job scheduler, however many workers there are', async () => {
    const queue = workers[0].get<Queue>(getQueueToken(MaintenanceQueue.name), { strict: false });
    const schedulers = await queue.getJobSchedulers();
    // One of each scheduled job (usage-aggregate is the other), not one per worker.
    expect(schedulers.map((s) => s.key).sort()).toEqual(['retention', 'usage-aggregate']);
    expect(schedulers.find((s) => s.key === 'retention')?.every).toBe(500);
  });

  it('removes a backlog larger than one batch', async () => {
    const ids: string[] = (
      await db.query(
        `INSERT INTO messages (id, account_id, message, status, attempts, created_at)
         SELECT 'msg_' || substr(md5(random()::text || g::text), 1, 28), $1, 'm', 'processed', 1, now() - interval '40 days'
           FROM generate_series(1, 2500) g RETURNING id`,
        [accountId],
      )
    ).map((r: { id: string }) => r.id);
    await eventually(async () => {
      const [{ left }] = await db.query(`SELECT count(*)::int AS left FROM messages WHERE id = ANY($1)`, [ids]);
      return left === 0;
    });
  });
});
