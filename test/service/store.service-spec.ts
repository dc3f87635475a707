import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { CatalogModule, PetsService } from '@app/catalog';
import { ApiError, entityTag, ErrorCode } from '@app/errors';
import { FulfilmentService, FulfilOrderJob, InventoryService, OrdersService, StoreModule } from '@app/store';
import { ServiceFactory } from './service.factory';

describe('store (service tier: orders, inventory and fulfilment on Postgres and Redis, no HTTP)', () => {
  let factory: ServiceFactory;
  let db: DataSource;
  let orders: OrdersService;
  let inventory: InventoryService;
  let fulfilment: FulfilmentService;
  let queue: Queue;
  let accountId: number;

  const error = (code: ErrorCode) => expect.objectContaining<Partial<ApiError>>({ code });
  const stock = async (petId: number) => (await db.query('SELECT stock FROM pets WHERE id = $1', [petId]))[0].stock;
  const petStatus = async (petId: number) =>
    (await db.query('SELECT status FROM pets WHERE id = $1', [petId]))[0].status;
  const events = async (type: string, resourceId: number) =>
    (
      await db.query(
        'SELECT data FROM events WHERE account_id = $1 AND type = $2 AND resource_id = $3::text ORDER BY id',
        [accountId, type, resourceId],
      )
    ).map((e: { data: unknown }) => e.data);
  const orderCount = async (petId: number) =>
    (await db.query('SELECT count(*)::int AS n FROM orders WHERE pet_id = $1', [petId]))[0].n;
  const fulfilState = (orderId: number) => queue.getJobState(FulfilOrderJob.jobId({ accountId, orderId }));
  const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();

  /** A pet of `owner` (the test account by default) with `units` in stock. */
  const pet = async (units: number, owner = accountId) => (await factory.pet(owner, { stock: units })).id;

  beforeAll(async () => {
    factory = await ServiceFactory.start(CatalogModule, StoreModule);
    db = factory.db;
    orders = factory.get(OrdersService);
    inventory = factory.get(InventoryService);
    fulfilment = factory.get(FulfilmentService);
    queue = factory.app.get<Queue>(getQueueToken(FulfilOrderJob.queue.name));
    accountId = await factory.account();
  });
  afterAll(() => factory?.close());

  describe('placing an order', () => {
    it('takes the ordered units from stock and records order.placed', async () => {
      const petId = await pet(5);
      const order = await orders.place(accountId, { petId, quantity: 2 });
      expect(order).toEqual({ id: expect.any(Number), petId, quantity: 2, complete: false });
      expect(await stock(petId)).toBe(3);
      expect(await events('order.placed', order.id)).toEqual([order]);
    });

    it('queues its fulfilment delayed until a future ship date', async () => {
      const order = await orders.place(accountId, { petId: await pet(1), quantity: 1, shipDate: inAnHour() });
      expect(await fulfilState(order.id)).toBe('delayed');
    });

    it('queues its fulfilment at once without a ship date', async () => {
      const order = await orders.place(accountId, { petId: await pet(1), quantity: 1 });
      expect(await fulfilState(order.id)).toBe('waiting');
    });

    it('makes the pet pending when its last unit is ordered', async () => {
      const petId = await pet(1);
      await orders.place(accountId, { petId, quantity: 1 });
      expect(await petStatus(petId)).toBe('pending');
    });

    it('refuses more units than in stock, leaving no order, no event and the stock as it was', async () => {
      const petId = await pet(1);
      await expect(orders.place(accountId, { petId, quantity: 2 })).rejects.toEqual(error('insufficient_stock'));
      expect(await orderCount(petId)).toBe(0);
      expect(await stock(petId)).toBe(1);
      const [{ n }] = await db.query(
        `SELECT count(*)::int AS n FROM events WHERE type = 'order.placed'
        AND (data->>'petId')::bigint = $1`,
        [petId],
      );
      expect(n).toBe(0);
    });

    it('sells no more than the stock to concurrent orders', async () => {
      const petId = await pet(3);
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () => orders.place(accountId, { petId, quantity: 1 })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      expect(results.filter((r) => r.status === 'rejected').map((r) => r.reason)).toEqual(
        Array(5).fill(error('insufficient_stock')),
      );
      expect(await stock(petId)).toBe(0);
      expect(await orderCount(petId)).toBe(3);
    });

    it("answers not_found for another account's pet", async () => {
      const theirs = await pet(5, await factory.account());
      await expect(orders.place(accountId, { petId: theirs, quantity: 1 })).rejects.toEqual(error('not_found'));
      expect(await stock(theirs)).toBe(5);
    });

    it('refuses an order for a sold pet (insufficient_stock), leaving no order', async () => {
      const { id: petId } = await factory.pet(accountId, { status: 'sold' });
      await expect(orders.place(accountId, { petId, quantity: 1 })).rejects.toEqual(error('insufficient_stock'));
      expect(await orderCount(petId)).toBe(0);
    });
  });

  describe('cancelling an order', () => {
    it('returns its units to stock, deletes it and records order.cancelled', async () => {
      const petId = await pet(2);
      const order = await orders.place(accountId, { petId, quantity: 2, shipDate: inAnHour() });
      await orders.cancel(accountId, order.id);
      expect(await stock(petId)).toBe(2);
      expect(await orderCount(petId)).toBe(0);
      expect(await events('order.cancelled', order.id)).toEqual([order]);
      expect(await petStatus(petId)).toBe('available');
    });

    it('removes its queued fulfilment job', async () => {
      const order = await orders.place(accountId, { petId: await pet(1), quantity: 1, shipDate: inAnHour() });
      await orders.cancel(accountId, order.id);
      expect(await fulfilState(order.id)).toBe('unknown');
    });

    it('refuses a complete order as not cancellable and keeps it', async () => {
      const petId = await pet(1);
      const order = await orders.place(accountId, { petId, quantity: 1 });
      await fulfilment.fulfil({ accountId, orderId: order.id });
      await expect(orders.cancel(accountId, order.id)).rejects.toEqual(error('order_not_cancellable'));
      expect(await orderCount(petId)).toBe(1);
    });

    it('refuses an If-Match that is not the current ETag of the order', async () => {
      const petId = await pet(1);
      const order = await orders.place(accountId, { petId, quantity: 1 });
      const stale = entityTag({ ...order, quantity: 9 });
      await expect(orders.cancel(accountId, order.id, stale)).rejects.toEqual(error('precondition_failed'));
      await orders.cancel(accountId, order.id, entityTag(order));
      expect(await orderCount(petId)).toBe(0);
    });

    it("answers not_found for another account's order", async () => {
      const other = await factory.account();
      const theirs = await orders.place(other, { petId: await pet(1, other), quantity: 1 });
      await expect(orders.cancel(accountId, theirs.id)).rejects.toEqual(error('not_found'));
    });
  });

  describe('reading orders', () => {
    let petId: number;
    let placed: number[];

    beforeAll(async () => {
      petId = await pet(10);
      placed = [];
      for (let i = 0; i < 3; i++) placed.push((await orders.place(accountId, { petId, quantity: 1 })).id);
      await fulfilment.fulfil({ accountId, orderId: placed[1] });
    });

    it('gets an order by id', async () => {
      expect(await orders.get(accountId, placed[0])).toEqual({ id: placed[0], petId, quantity: 1, complete: false });
    });

    it("answers not_found for another account's order", async () => {
      await expect(orders.get(await factory.account(), placed[0])).rejects.toEqual(error('not_found'));
    });

    it('lists by id, one row more than the limit, from after the given id', async () => {
      const page = await orders.list(accountId, { limit: 1, after: placed[0], petId });
      expect(page.map((o) => o.id)).toEqual([placed[1], placed[2]]);
    });

    it('lists only the orders of the given pet', async () => {
      const other = await pet(1);
      await orders.place(accountId, { petId: other, quantity: 1 });
      expect((await orders.list(accountId, { limit: 100, petId })).map((o) => o.id)).toEqual(placed);
    });

    it("lists none of another account's orders", async () => {
      expect(await orders.list(await factory.account(), { limit: 100 })).toEqual([]);
    });

    it('lists only complete, or only open, orders when asked', async () => {
      const complete = await orders.list(accountId, { limit: 100, petId, complete: true });
      const open = await orders.list(accountId, { limit: 100, petId, complete: false });
      expect(complete.map((o) => o.id)).toEqual([placed[1]]);
      expect(open.map((o) => o.id)).toEqual([placed[0], placed[2]]);
    });
  });

  describe('inventory', () => {
    it('sets the stock, records inventory.updated with the previous quantity and answers the item', async () => {
      const petId = await pet(4);
      expect(await inventory.set(accountId, petId, 7)).toEqual({ petId, quantity: 7, status: 'available' });
      expect((await events('inventory.updated', petId)).at(-1)).toEqual({ petId, quantity: 7, previousQuantity: 4 });
    });

    it('marks a pet sold when its stock is set to zero with no open order', async () => {
      const petId = await pet(4);
      expect(await inventory.set(accountId, petId, 0)).toEqual({ petId, quantity: 0, status: 'sold' });
    });

    it('refuses an If-Match that is not the current ETag of the item', async () => {
      const petId = await pet(4);
      const stale = entityTag({ petId, quantity: 3, status: 'available' });
      await expect(inventory.set(accountId, petId, 1, stale)).rejects.toEqual(error('precondition_failed'));
      expect(await stock(petId)).toBe(4);
    });

    it("answers not_found for another account's pet", async () => {
      const theirs = await pet(2, await factory.account());
      await expect(inventory.get(accountId, theirs)).rejects.toEqual(error('not_found'));
      await expect(inventory.set(accountId, theirs, 9)).rejects.toEqual(error('not_found'));
      expect(await stock(theirs)).toBe(2);
    });

    it("lists none of another account's items", async () => {
      await pet(3);
      expect(await inventory.list(await factory.account(), { limit: 100 })).toEqual([]);
    });

    it('lists only the items of the requested status', async () => {
      const owner = await factory.account();
      const [a, b] = [await pet(2, owner), await pet(0, owner)];
      expect(await inventory.list(owner, { limit: 10, status: 'sold' })).toEqual([
        { petId: b, quantity: 0, status: 'sold' },
      ]);
      expect((await inventory.list(owner, { limit: 10 })).map((i) => i.petId)).toEqual([a, b]);
    });
  });

  describe('fulfilment', () => {
    it('completes an open order, records order.completed and answers true', async () => {
      const petId = await pet(1);
      const order = await orders.place(accountId, { petId, quantity: 1 });
      expect(await fulfilment.fulfil({ accountId, orderId: order.id })).toBe(true);
      const done = await orders.get(accountId, order.id);
      expect(done).toEqual({ ...order, complete: true, shipDate: expect.any(String) });
      expect(await events('order.completed', order.id)).toEqual([done]);
    });

    it('keeps the requested ship date', async () => {
      const shipDate = inAnHour();
      const order = await orders.place(accountId, { petId: await pet(1), quantity: 1, shipDate });
      await fulfilment.fulfil({ accountId, orderId: order.id });
      expect((await orders.get(accountId, order.id)).shipDate).toBe(shipDate);
    });

    it('makes the pet sold when its last open order is fulfilled', async () => {
      const petId = await pet(1);
      const order = await orders.place(accountId, { petId, quantity: 1 });
      await fulfilment.fulfil({ accountId, orderId: order.id });
      expect(await petStatus(petId)).toBe('sold');
    });

    it('fulfils an order once, with one event, however often its job runs', async () => {
      const order = await orders.place(accountId, { petId: await pet(1), quantity: 1 });
      const runs = await Promise.all([1, 2, 3].map(() => fulfilment.fulfil({ accountId, orderId: order.id })));
      expect(runs.sort()).toEqual([false, false, true]);
      expect(await events('order.completed', order.id)).toHaveLength(1);
    });

    it('leaves a cancelled order alone and answers false', async () => {
      const order = await orders.place(accountId, { petId: await pet(1), quantity: 1 });
      await orders.cancel(accountId, order.id);
      expect(await fulfilment.fulfil({ accountId, orderId: order.id })).toBe(false);
      expect(await events('order.completed', order.id)).toHaveLength(0);
    });
  });

  it('changes the pet status, with pet.status_changed each time, through order, fulfilment, restock and cancel', async () => {
    const petId = await pet(1);
    const first = await orders.place(accountId, { petId, quantity: 1 });
    await fulfilment.fulfil({ accountId, orderId: first.id });
    await inventory.set(accountId, petId, 2);
    const held = await orders.place(accountId, { petId, quantity: 2, shipDate: inAnHour() });
    await orders.cancel(accountId, held.id);
    const changes = await db.query(
      `SELECT data->>'previousStatus' AS "from", data->>'status' AS "to" FROM events
        WHERE account_id = $1 AND type = 'pet.status_changed' AND resource_id = $2::text ORDER BY id`,
      [accountId, petId],
    );
    expect(changes.map((c: { from: string; to: string }) => `${c.from} -> ${c.to}`)).toEqual([
      'available -> pending',
      'pending -> sold',
      'sold -> available',
      'available -> pending',
      'pending -> available',
    ]);
    expect((await factory.get(PetsService).get(accountId, petId)).status).toBe('available');
  });
});
