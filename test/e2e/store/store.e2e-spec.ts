import { INestApplicationContext } from '@nestjs/common';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { ApiError } from '@app/errors';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { FulfilmentQueue, FulfilmentService, FulfilOrderJob, InventoryService, OrdersService } from '@app/store';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { eventually, HttpClient } from '../../support/http';
import { expectErrorBody } from '../../support/expect-error';

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();

describe('store: inventory, orders, fulfilment', () => {
  let api: RunningApi;
  let api2: RunningApi;
  let worker: INestApplicationContext;
  let http: HttpClient;
  let accountId: number;
  let categoryId: number;
  let db: DataSource;

  beforeAll(async () => {
    [api, api2] = await Promise.all([startApi(), startApi()]);
    worker = await startWorker({ SWEEP_INTERVAL_MS: '400' });
    const account = await createAccount(api);
    accountId = account.accountId;
    http = new HttpClient(api.url, account.apiKey);
    categoryId = (await http.post('/v1/categories', { name: 'Store dogs' })).body.id;
    db = api.app.get(DataSource);
  });
  afterAll(() => closeAll([() => worker?.close(), () => api?.close(), () => api2?.close()]));

  async function newPet(stock?: number, client = http, category = categoryId): Promise<number> {
    const res = await client.post('/v1/pets', { name: `pet ${Math.random()}`, categoryId: category });
    expect(res.status).toBe(201);
    if (stock !== undefined)
      expect((await client.put(`/v1/store/inventory/${res.body.id}`, { quantity: stock })).status).toBe(200);
    return res.body.id;
  }

  const status = async (petId: number) => (await http.get(`/v1/store/inventory/${petId}`)).body;
  const fulfilmentQueue = () => api.app.get<Queue>(getQueueToken(FulfilmentQueue.name), { strict: false });
  const fulfilmentJobId = (orderId: number) => FulfilOrderJob.jobId({ accountId, orderId });

  describe('inventory', () => {
    it('reads, sets (status follows), filters by status and pages', async () => {
      const a = await newPet();
      expect(await status(a)).toEqual({ petId: a, quantity: 1, status: 'available' });
      const set = await http.put(`/v1/store/inventory/${a}`, { quantity: 0 });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ petId: a, quantity: 0, status: 'sold' });
      expect((await http.put(`/v1/store/inventory/${a}`, { quantity: 7 })).body).toEqual({
        petId: a,
        quantity: 7,
        status: 'available',
      });
      const b = await newPet(0);
      const sold = await http.get('/v1/store/inventory?status=sold&limit=100');
      expect(sold.body.map((i: any) => i.petId)).toContain(b);
      expect(sold.body.every((i: any) => i.status === 'sold' && i.quantity === 0)).toBe(true);

      const first = await http.get('/v1/store/inventory?limit=1');
      expect(first.body).toHaveLength(1);
      const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link')!)![1];
      expect(next).toBe(`/v1/store/inventory?limit=1&after=${first.body[0].petId}`);
      const second = await http.get(next);
      expect(second.body[0].petId).toBeGreaterThan(first.body[0].petId);
    });

    it('ETag / If-None-Match / If-Match, validation and errors', async () => {
      const p = await newPet();
      const read = await http.get(`/v1/store/inventory/${p}`);
      const etag = read.headers.get('etag')!;
      expect(etag).toMatch(/^"[^"]+"$/);
      expect((await http.get(`/v1/store/inventory/${p}`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
      expect(
        (await http.put(`/v1/store/inventory/${p}`, { quantity: 3 }, { headers: { 'If-Match': etag } })).status,
      ).toBe(200);
      expectErrorBody(
        await http.put(`/v1/store/inventory/${p}`, { quantity: 4 }, { headers: { 'If-Match': etag } }),
        412,
        'precondition_failed',
      );
      for (const body of [{ quantity: -1 }, { quantity: 1.5 }, { quantity: '3' }, {}]) {
        expectErrorBody(await http.put(`/v1/store/inventory/${p}`, body), 400, 'validation_failed');
      }
      expectErrorBody(await http.put('/v1/store/inventory/999999999', { quantity: 1 }), 404, 'not_found');
      expectErrorBody(await http.get('/v1/store/inventory/999999999'), 404, 'not_found');
      expectErrorBody(await http.get('/v1/store/inventory?status=gone'), 400, 'invalid_parameter');
      expectErrorBody(await http.get('/v1/store/inventory?limit=101'), 400, 'invalid_parameter');
    });
  });

  describe('orders', () => {
    it('places an order (201 + Location), reads it with an ETag, and refuses what it must', async () => {
      const p = await newPet(5);
      const shipDate = inAnHour();
      const res = await http.post('/v1/store/orders', { petId: p, quantity: 2, shipDate });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), petId: p, quantity: 2, shipDate, complete: false });
      expect(res.headers.get('location')).toBe(`/v1/store/orders/${res.body.id}`);
      expect((await status(p)).quantity).toBe(3);

      const read = await http.get(`/v1/store/orders/${res.body.id}`);
      expect(read.body).toEqual(res.body);
      const etag = read.headers.get('etag')!;
      expect((await http.get(`/v1/store/orders/${res.body.id}`, { headers: { 'If-None-Match': etag } })).status).toBe(
        304,
      );

      const defaults = await http.post('/v1/store/orders', { petId: p, shipDate });
      expect(defaults.body.quantity).toBe(1);
      expectErrorBody(await http.post('/v1/store/orders', { petId: p, quantity: 3 }), 409, 'insufficient_stock');
      expectErrorBody(await http.post('/v1/store/orders', { petId: 999_999_999 }), 404, 'not_found');
      for (const body of [{ petId: p, quantity: 0 }, { quantity: 1 }, { petId: p, shipDate: 'tomorrow' }]) {
        expectErrorBody(await http.post('/v1/store/orders', body), 400, 'validation_failed');
      }
      expectErrorBody(
        await http.delete(`/v1/store/orders/${res.body.id}`, { headers: { 'If-Match': '"stale"' } }),
        412,
        'precondition_failed',
      );
      expect((await http.delete(`/v1/store/orders/${res.body.id}`, { headers: { 'If-Match': etag } })).status).toBe(
        204,
      );
      expectErrorBody(await http.get(`/v1/store/orders/${res.body.id}`), 404, 'not_found');
      expectErrorBody(await http.delete(`/v1/store/orders/${res.body.id}`), 404, 'not_found');
    });

    it('lists orders filtered by complete and petId, in keyset pages', async () => {
      const p = await newPet(10);
      const q = await newPet(10);
      const open = [];
      for (const petId of [p, q, p, q, p]) {
        open.push((await http.post('/v1/store/orders', { petId, shipDate: inAnHour() })).body.id);
      }
      const done = (await http.post('/v1/store/orders', { petId: p })).body.id;
      await eventually(async () => (await http.get(`/v1/store/orders/${done}`)).body.complete);

      const ids = (res: any) => res.body.map((o: any) => o.id);
      expect(ids(await http.get(`/v1/store/orders?petId=${p}`))).toEqual([open[0], open[2], open[4], done]);
      expect(ids(await http.get(`/v1/store/orders?petId=${p}&complete=false`))).toEqual([open[0], open[2], open[4]]);
      expect(ids(await http.get(`/v1/store/orders?petId=${p}&complete=true`))).toEqual([done]);
      const seen: number[] = [];
      let path: string | undefined = `/v1/store/orders?petId=${q}&limit=1`;
      while (path) {
        const res: any = await http.get(path);
        seen.push(...ids(res));
        path = res.headers.get('link') ? /^<([^>]+)>/.exec(res.headers.get('link'))![1] : undefined;
      }
      expect(seen).toEqual([open[1], open[3]]);
      expectErrorBody(await http.get('/v1/store/orders?complete=yes'), 400, 'invalid_parameter');
      expectErrorBody(await http.get('/v1/store/orders?petId=-1'), 400, 'invalid_parameter');
    });

    it('isolates tenants: another account gets 404 on orders, inventory and ordering', async () => {
      const p = await newPet(3);
      const order = (await http.post('/v1/store/orders', { petId: p, shipDate: inAnHour() })).body;
      const other = new HttpClient(api.url, (await createAccount(api)).apiKey);
      for (const res of [
        await other.get(`/v1/store/orders/${order.id}`),
        await other.delete(`/v1/store/orders/${order.id}`),
        await other.get(`/v1/store/inventory/${p}`),
        await other.put(`/v1/store/inventory/${p}`, { quantity: 100 }),
        await other.post('/v1/store/orders', { petId: p }),
      ]) {
        expectErrorBody(res, 404, 'not_found');
      }
      expect((await other.get('/v1/store/orders')).body).toEqual([]);
      expect((await other.get('/v1/store/inventory')).body).toEqual([]);
      expect(await status(p)).toEqual({ petId: p, quantity: 2, status: 'available' });
    });
  });

  it('never oversells: 40 parallel orders on a stock of 10 over two API instances create exactly 10', async () => {
    const p = await newPet(10);
    const other = new HttpClient(api2.url, http.defaultKey);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? other : http).post('/v1/store/orders', { petId: p, shipDate: inAnHour() }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(30);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.code).toBe('insufficient_stock');
    expect(await status(p)).toEqual({ petId: p, quantity: 0, status: 'pending' });
    const [{ count }] = await db.query('SELECT count(*)::int AS count FROM orders WHERE pet_id = $1', [p]);
    expect(count).toBe(10);
  });

  it('statuses follow the rule through order -> fulfil -> restock -> cancel', async () => {
    const p = await newPet(); // one unit: available
    const order = (await http.post('/v1/store/orders', { petId: p })).body;
    // Right after the order the stock is 0 with an open order (pending) until the worker fulfils it.
    const completed = await eventually(async () => {
      const o = (await http.get(`/v1/store/orders/${order.id}`)).body;
      return o.complete ? o : null;
    });
    expect(completed.shipDate).toEqual(expect.any(String));
    expect(await status(p)).toEqual({ petId: p, quantity: 0, status: 'sold' });
    expectErrorBody(await http.delete(`/v1/store/orders/${order.id}`), 409, 'order_not_cancellable');

    await http.put(`/v1/store/inventory/${p}`, { quantity: 2 });
    expect((await status(p)).status).toBe('available');
    const held = (await http.post('/v1/store/orders', { petId: p, quantity: 2, shipDate: inAnHour() })).body;
    expect(await status(p)).toEqual({ petId: p, quantity: 0, status: 'pending' });
    expect((await http.get(`/v1/pets?ids=${p}`)).body[0].status).toBe('pending');
    expect(await fulfilmentQueue().getJobState(fulfilmentJobId(held.id))).toBe('delayed');

    expect((await http.delete(`/v1/store/orders/${held.id}`)).status).toBe(204);
    expect(await status(p)).toEqual({ petId: p, quantity: 2, status: 'available' });
    expect(await fulfilmentQueue().getJobState(fulfilmentJobId(held.id))).toBe('unknown');

    const events: { type: string; data: any }[] = await db.query(
      `SELECT type, data FROM events WHERE account_id = $1
       AND ((resource_type IN ('pet', 'inventory') AND resource_id = $2)
         OR (resource_type = 'order' AND resource_id IN ($3, $4)))
       ORDER BY id`,
      [accountId, String(p), String(order.id), String(held.id)],
    );
    expect(events.map((e) => e.type)).toEqual([
      'pet.created',
      'order.placed',
      'pet.status_changed', // available -> pending
      'order.completed',
      'pet.status_changed', // pending -> sold
      'inventory.updated',
      'pet.status_changed', // sold -> available
      'order.placed',
      'pet.status_changed', // available -> pending
      'order.cancelled',
      'pet.status_changed', // pending -> available
    ]);
    expect(events.filter((e) => e.type === 'pet.status_changed').map((e) => e.data.status)).toEqual([
      'pending',
      'sold',
      'available',
      'pending',
      'available',
    ]);
  });

  it('fulfils a delayed order at its shipDate, not before', async () => {
    const p = await newPet();
    const shipDate = new Date(Date.now() + 2_000);
    const order = (await http.post('/v1/store/orders', { petId: p, shipDate: shipDate.toISOString() })).body;
    expect(await fulfilmentQueue().getJobState(fulfilmentJobId(order.id))).toBe('delayed');
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await http.get(`/v1/store/orders/${order.id}`)).body.complete).toBe(false);
    await eventually(async () => (await http.get(`/v1/store/orders/${order.id}`)).body.complete, 5_000, 50);
    expect(Date.now()).toBeGreaterThanOrEqual(shipDate.getTime());
    expect((await http.get(`/v1/store/orders/${order.id}`)).body.shipDate).toBe(shipDate.toISOString());
    expect((await status(p)).status).toBe('sold');
  });

  it('a fulfilment job run twice changes nothing the second time', async () => {
    const p = await newPet(3);
    const order = (await http.post('/v1/store/orders', { petId: p, shipDate: inAnHour() })).body;
    const fulfilment = worker.get(FulfilmentService);
    const job = { accountId, orderId: order.id };
    const snapshot = async () => ({
      order: (await http.get(`/v1/store/orders/${order.id}`)).body,
      inventory: await status(p),
      events: (await db.query('SELECT count(*)::int AS n FROM events WHERE account_id = $1', [accountId]))[0].n,
    });
    expect(await fulfilment.fulfil(job)).toBe(true);
    const after = await snapshot();
    expect(after.order).toEqual({ ...order, complete: true });
    expect(await fulfilment.fulfil(job)).toBe(false);
    expect(await snapshot()).toEqual(after);
  });

  it('the sweep re-enqueues a lost fulfilment job', async () => {
    const p = await newPet();
    const shipDate = new Date(Date.now() + 800).toISOString();
    const order = (await http.post('/v1/store/orders', { petId: p, shipDate })).body;
    const jobId = fulfilmentJobId(order.id);
    expect(await fulfilmentQueue().remove(jobId)).toBe(1); // lost, as if Redis had been flushed
    expect(await fulfilmentQueue().getJobState(jobId)).toBe('unknown');
    const done = await eventually(async () => {
      const o = (await http.get(`/v1/store/orders/${order.id}`)).body;
      return o.complete ? o : null;
    });
    expect(done.shipDate).toBe(shipDate);
    expect((await status(p)).status).toBe('sold');
  });

  it('property: status follows the rule, stock never negative, units conserved, over random operations', async () => {
    const inventory = api.app.get(InventoryService);
    const orders = api.app.get(OrdersService);
    const fulfilment = worker.get(FulfilmentService);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('restock' as const), quantity: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ kind: fc.constant('order' as const), quantity: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('fulfil' as const), pick: fc.nat() }),
    );

    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3 }),
        fc.array(op, { minLength: 1, maxLength: 10 }),
        async (initial, ops) => {
          const petId = await newPet(initial);
          const open: { id: number; quantity: number }[] = [];
          let conserved = initial; // stock + units in open orders, since the last explicit update
          for (const step of ops) {
            if (step.kind === 'restock') {
              await inventory.set(accountId, petId, step.quantity);
              conserved = step.quantity + open.reduce((n, o) => n + o.quantity, 0);
            } else if (step.kind === 'order') {
              // A far ship date keeps the worker out of it: this test fulfils by itself.
              const placed = await orders
                .place(accountId, { petId, quantity: step.quantity, shipDate: inAnHour() })
                .catch((err: unknown) => {
                  if (err instanceof ApiError && err.code === 'insufficient_stock') return null;
                  throw err;
                });
              if (placed) open.push({ id: placed.id, quantity: step.quantity });
            } else if (open.length) {
              const [target] = open.splice(step.pick % open.length, 1);
              if (step.kind === 'cancel') await orders.cancel(accountId, target.id);
              else {
                expect(await fulfilment.fulfil({ accountId, orderId: target.id })).toBe(true);
                conserved -= target.quantity; // shipped units leave the store
              }
            }
            const [pet] = await db.query('SELECT stock, status FROM pets WHERE id = $1', [petId]);
            const [{ units, count }] = await db.query(
              'SELECT coalesce(sum(quantity), 0)::int AS units, count(*)::int AS count FROM orders WHERE pet_id = $1 AND NOT complete',
              [petId],
            );
            expect(pet.stock).toBeGreaterThanOrEqual(0);
            expect(pet.status).toBe(pet.stock > 0 ? 'available' : count > 0 ? 'pending' : 'sold');
            expect(count).toBe(open.length);
            expect(pet.stock + units).toBe(conserved);
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
