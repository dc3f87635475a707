import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { sweepRequeued } from '@app/jobs';
import { eventually, HttpClient, HttpResponse } from '../../support/http';
import { OwnStores } from '../../support/own-stores';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { sweepPasses } from '../../support/quiescence';
import { WebhookReceiver } from '@app/testing';

/** Every job the sweep of the workers in this process gave back so far, all sources. */
const requeuedSoFar = async () => (await sweepRequeued().get()).values.reduce((sum, v) => sum + v.value, 0);

/**
 * Two APIs and two workers on a small connection budget (3 + 3 + 2 + 2 = 10 connections) under
 * mixed load: nobody is refused a connection (no 503), every message, order and delivery is done
 * exactly once, and the sweep gives nothing back.
 */
describe('two APIs and two workers on a small connection budget', () => {
  let apis: RunningApi[];
  let workers: INestApplicationContext[];
  let receiver: WebhookReceiver;
  let db: DataSource;
  let stores: OwnStores;

  beforeAll(async () => {
    // Its own stores: the sweep must find nothing to give back, whatever other files left open.
    stores = await OwnStores.start('connection_budget');
    // The receiver is on loopback.
    const api = { ...stores.env, DATABASE_POOL_SIZE: '3', ALLOW_PRIVATE_WEBHOOK_URLS: 'true' };
    apis = await Promise.all([startApi(api), startApi(api)]);
    const small = {
      ...stores.env,
      WORKER_DATABASE_POOL_SIZE: '2',
      SWEEP_INTERVAL_MS: '500',
      ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    };
    workers = await Promise.all([startWorker(small), startWorker(small)]);
    receiver = await new WebhookReceiver().start();
    db = apis[0].app.get(DataSource);
  });
  afterAll(() =>
    closeAll([
      ...workers.map((w) => () => w.close()),
      ...apis.map((a) => () => a.close()),
      () => receiver?.close(),
      () => stores?.stop(),
    ]),
  );

  it('answers everything, does each message, order and delivery once, and the sweep gives back nothing', async () => {
    const { apiKey } = await createAccount(apis[0], 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    const [a, b] = apis.map((api) => new HttpClient(api.url, apiKey));
    const category = (await a.post('/v1/categories', { name: 'budget' })).body.id;
    expect((await a.post('/v1/webhooks', { url: receiver.url, events: ['order.completed'] })).status).toBe(201);
    const pets = await Promise.all(
      Array.from({ length: 20 }, (_, i) => b.post('/v1/pets', { name: `budget ${i}`, categoryId: category })),
    );
    for (const p of pets) await a.put(`/v1/store/inventory/${p.body.id}`, { quantity: 50 });
    const requeuedBefore = await requeuedSoFar();

    const answers: HttpResponse<{ id: string | number }>[] = [];
    for (let round = 0; round < 10; round++) {
      answers.push(
        ...(await Promise.all([
          ...Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).post('/v1/messages', { message: `m ${round}.${i}` })),
          ...Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? b : a).post('/v1/store/orders', { petId: pets[(round + i) % pets.length].body.id }),
          ),
          ...Array.from({ length: 10 }, () => (round % 2 ? a : b).get('/v1/pets?limit=20')),
        ])),
      );
    }
    const statuses = new Set(answers.map((r) => r.status));
    expect([...statuses].sort()).toEqual([200, 201, 202]);

    const messages = answers.filter((r) => r.status === 202).map((r) => r.body.id as string);
    const orders = answers.filter((r) => r.status === 201).map((r) => r.body.id as number);
    await eventually(async () => {
      const [{ open }] = await db.query(
        `SELECT (SELECT count(*) FROM messages WHERE id = ANY($1) AND status <> 'processed')
              + (SELECT count(*) FROM orders WHERE id = ANY($2) AND NOT complete) AS open`,
        [messages, orders],
      );
      return Number(open) === 0 && receiver.requests.length >= orders.length;
    }, 30_000);
    const [{ processed }] = await db.query(
      `SELECT count(*)::int AS processed FROM events WHERE type = 'message.processed' AND resource_id = ANY($1)`,
      [messages],
    );
    expect(processed).toBe(messages.length);
    const [{ completed }] = await db.query(
      `SELECT count(*)::int AS completed FROM events WHERE type = 'order.completed' AND resource_id = ANY($1)`,
      [orders.map(String)],
    );
    expect(completed).toBe(orders.length);
    // Two more sweep passes: a late duplicate would show up here.
    await Promise.all(workers.map((worker) => sweepPasses(worker, 2)));
    const delivered = receiver.requests.map((r) => r.headers['petstore-event-id']);
    expect(new Set(delivered).size).toBe(orders.length);
    expect(delivered).toHaveLength(orders.length);
    expect((await requeuedSoFar()) - requeuedBefore).toBe(0);
  });
});
