import { Client } from 'pg';
import { report } from './support/load';
import { createAccount, ServiceProcess, stopAll } from './support/service-process';

const databaseUrl = process.env.DATABASE_URL as string;
const ORDERS = 200;
const MESSAGES = 500;
const PETS = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('faults: kill -9 of the worker during a burst', () => {
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let db: Client;
  let apiKey: string;
  let accountId: number;

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${(api as ServiceProcess).url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  /** How many times each resource got the event that says "done": exactly once is the promise. */
  async function doneCounts(type: string): Promise<Map<string, number>> {
    const { rows } = await db.query<{ id: string; n: number }>(
      `SELECT resource_id AS id, count(*)::int AS n FROM events WHERE account_id = $1 AND type = $2 GROUP BY 1`,
      [accountId, type],
    );
    return new Map(rows.map((r) => [r.id, r.n]));
  }

  beforeAll(async () => {
    ({ apiKey, accountId } = await createAccount(databaseUrl, 'faults worker crash'));
    // A short job lock (JOB_LOCK_MS) so the dead worker's active jobs come back in seconds.
    [api, worker] = await Promise.all([
      ServiceProcess.start('api'),
      ServiceProcess.start('worker', { JOB_LOCK_MS: '5000' }),
    ]);
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await stopAll([api, worker]);
    await db?.end();
  });

  it(`${MESSAGES} messages and ${ORDERS} orders: every one processed or fulfilled exactly once after a restart`, async () => {
    const category = await call('POST', '/v1/categories', { name: 'crash test' });
    expect(category.status).toBe(201);
    const petIds: number[] = [];
    for (let i = 0; i < PETS; i++) {
      const pet = await call('POST', '/v1/pets', { name: `crash-test-${i}`, categoryId: category.body.id });
      expect(pet.status).toBe(201);
      expect((await call('PUT', `/v1/store/inventory/${pet.body.id}`, { quantity: ORDERS })).status).toBe(200);
      petIds.push(pet.body.id);
    }

    // The burst: orders and messages interleaved, 16 at a time; the worker dies a quarter in.
    const work: (() => Promise<void>)[] = [];
    const orderIds: string[] = [];
    const messageIds: string[] = [];
    const refused: string[] = [];
    for (let i = 0; i < Math.max(ORDERS, MESSAGES); i++) {
      if (i < MESSAGES)
        work.push(async () => {
          const r = await call('POST', '/v1/messages', { message: `burst message ${i}` });
          if (r.status === 202) messageIds.push(String(r.body.id));
          else refused.push(`message ${i}: ${r.status} ${r.body?.code}`);
        });
      if (i < ORDERS)
        work.push(async () => {
          const r = await call('POST', '/v1/store/orders', { petId: petIds[i % PETS], quantity: 1 });
          if (r.status === 201) orderIds.push(String(r.body.id));
          else refused.push(`order ${i}: ${r.status} ${r.body?.code}`);
        });
    }
    const total = work.length;
    let next = 0;
    let killed: Promise<unknown> | undefined;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < total) {
          const job = work[next++];
          if (!killed && next >= total / 4) killed = (worker as ServiceProcess).kill9();
          await job();
        }
      }),
    );
    const burstMs = Date.now() - t0;
    const exit = await killed;
    const doneBeforeRestart = (await doneCounts('order.completed')).size + (await doneCounts('message.processed')).size;
    await sleep(1_000);
    await (worker as ServiceProcess).start();
    const restartedAt = Date.now();

    // Active jobs of the dead worker come back when their BullMQ lock expires (JOB_LOCK_MS) and
    // the stalled-job check runs; the rest is simply waiting in Redis or in the outbox.
    let orders = new Map<string, number>();
    let messages = new Map<string, number>();
    while (Date.now() - restartedAt < 100_000) {
      [orders, messages] = await Promise.all([doneCounts('order.completed'), doneCounts('message.processed')]);
      if (orders.size >= orderIds.length && messages.size >= messageIds.length) break;
      await sleep(500);
    }
    const recoveryMs = Date.now() - restartedAt;
    await sleep(2_000); // a late duplicate would show up here
    [orders, messages] = await Promise.all([doneCounts('order.completed'), doneCounts('message.processed')]);
    const { rows: incomplete } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND NOT complete`,
      [accountId],
    );
    const statuses: Record<string, number> = {};
    for (const id of messageIds) {
      const r = await call('GET', `/v1/messages/${id}`);
      statuses[r.body?.status ?? r.status] = (statuses[r.body?.status ?? r.status] ?? 0) + 1;
    }

    const figures = {
      burstMs,
      workerExit: exit,
      doneBeforeRestart,
      recoveryMsAfterRestart: recoveryMs,
      ordersAccepted: orderIds.length,
      ordersFulfilled: orderIds.filter((id) => orders.has(id)).length,
      orderDuplicates: [...orders.values()].filter((n) => n > 1).length,
      ordersLost: orderIds.filter((id) => !orders.has(id)).length,
      ordersStillOpen: incomplete[0].n,
      messagesAccepted: messageIds.length,
      messagesProcessed: messageIds.filter((id) => messages.has(id)).length,
      messageDuplicates: [...messages.values()].filter((n) => n > 1).length,
      messagesLost: messageIds.filter((id) => !messages.has(id)).length,
      messageStatuses: statuses,
      refused: refused.length,
    };
    report('worker kill -9 during a burst', figures);

    expect(refused).toEqual([]);
    expect(orderIds).toHaveLength(ORDERS);
    expect(messageIds).toHaveLength(MESSAGES);
    expect(figures.ordersLost).toBe(0);
    expect(figures.orderDuplicates).toBe(0);
    expect(figures.ordersStillOpen).toBe(0);
    expect(figures.messagesLost).toBe(0);
    expect(figures.messageDuplicates).toBe(0);
    expect(statuses).toEqual({ processed: MESSAGES });
  });
});
