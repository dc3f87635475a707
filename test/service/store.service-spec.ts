import { INestApplicationContext } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { CatalogModule, CategoriesService, PetsService } from '@app/catalog';
import { ApiError } from '@app/errors';
import { FulfilmentQueue, FulfilOrderJob, InventoryService, OrdersService, StoreModule } from '@app/store';
import { featureModules, newAccount } from './feature-modules';

describe('store (service tier: OrdersService on Postgres and Redis, no HTTP)', () => {
  let app: INestApplicationContext;
  let db: DataSource;
  let orders: OrdersService;
  let accountId: number;
  let petId: number;

  const count = async (sql: string, params: unknown[]) => (await db.query(sql, params))[0].n as number;
  const orderEvents = () =>
    count(`SELECT count(*)::int AS n FROM events WHERE account_id = $1 AND type = 'order.placed'`, [accountId]);
  const farShipDate = () => new Date(Date.now() + 3600_000).toISOString();

  beforeAll(async () => {
    app = await featureModules(CatalogModule, StoreModule);
    db = app.get(DataSource);
    orders = app.get(OrdersService);
    accountId = await newAccount(app);
    const category = await app.get(CategoriesService).create(accountId, { name: 'Service tier' });
    petId = (await app.get(PetsService).create(accountId, { name: 'Rex', categoryId: category.id })).id;
    await app.get(InventoryService).set(accountId, petId, 2);
  });
  afterAll(() => app?.close());

  it('placing an order takes the stock, records order.placed and queues its fulfilment for the ship date', async () => {
    const order = await orders.place(accountId, { petId, quantity: 2, shipDate: farShipDate() });
    expect(await count('SELECT stock AS n FROM pets WHERE id = $1', [petId])).toBe(0);
    expect(await orderEvents()).toBe(1);
    const queue = app.get<Queue>(getQueueToken(FulfilmentQueue.name));
    const jobId = FulfilOrderJob.jobId({ accountId, orderId: order.id });
    expect(await queue.getJobState(jobId)).toBe('delayed');
  });

  it('a refused order (insufficient stock) leaves no order, no event and the stock as it was', async () => {
    const ordersBefore = await count('SELECT count(*)::int AS n FROM orders WHERE account_id = $1', [accountId]);
    await expect(orders.place(accountId, { petId, quantity: 1, shipDate: farShipDate() })).rejects.toEqual(
      expect.objectContaining<Partial<ApiError>>({ code: 'insufficient_stock' }),
    );
    expect(await count('SELECT count(*)::int AS n FROM orders WHERE account_id = $1', [accountId])).toBe(ordersBefore);
    expect(await orderEvents()).toBe(1);
    expect(await count('SELECT stock AS n FROM pets WHERE id = $1', [petId])).toBe(0);
  });
});
