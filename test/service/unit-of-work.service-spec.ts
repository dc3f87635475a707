import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { sql } from '@app/database';
import { CatalogModule } from '@app/catalog';
import { FulfilOrderJob, StoreModule } from '@app/store';
import { UnitOfWork } from '@app/transactions';
import { WebhooksModule } from '@app/webhooks';
import { ServiceFactory } from './service.factory';

/** A failed unit of work commits none of what it did: rows, domain events (with their fan-out jobs) and jobs. */
describe('the unit of work (service tier: Postgres and Redis)', () => {
  let factory: ServiceFactory;
  let db: DataSource;
  let uow: UnitOfWork;
  let queue: Queue;
  let accountId: number;

  beforeAll(async () => {
    factory = await ServiceFactory.start(CatalogModule, StoreModule, WebhooksModule);
    db = factory.db;
    uow = factory.get(UnitOfWork);
    queue = factory.app.get<Queue>(getQueueToken(FulfilOrderJob.queue.name));
    accountId = await factory.account();
    // A subscriber: each event the account records also stages its fan-out job.
    await factory.webhook(accountId, { events: ['order.placed'] });
  });
  afterAll(() => factory?.close());

  const left = async (orderId: number) => {
    const [{ events }] = await db.query(
      `SELECT count(*)::int AS events FROM events WHERE account_id = $1 AND resource_id = $2::text`,
      [accountId, orderId],
    );
    const [{ jobs }] = await db.query(`SELECT count(*)::int AS jobs FROM outbox WHERE payload->>'accountId' = $1`, [
      String(accountId),
    ]);
    const queued = await queue.getJob(FulfilOrderJob.jobId({ accountId, orderId }));
    return { events, jobs, queued: queued !== undefined };
  };
  const placed = (orderId: number) => ({
    accountId,
    type: 'order.placed' as const,
    resourceType: 'order',
    resourceId: orderId,
    data: { id: orderId },
  });

  it('leaves neither its event nor its jobs when the work throws after emitting and enqueueing', async () => {
    const orderId = 9_000_001;
    const work = uow.run(async (tx) => {
      await tx.emit(placed(orderId));
      tx.enqueue(FulfilOrderJob, { accountId, orderId });
      throw new Error('work failed');
    });
    await expect(work).rejects.toThrow('work failed');
    expect(await left(orderId)).toEqual({ events: 0, jobs: 0, queued: false });
  });

  it('leaves neither its event nor its jobs when the statement that writes its outbox rows fails', async () => {
    const orderId = 9_000_002;
    const work = uow.run(async (tx) => {
      await tx.emit(placed(orderId));
      tx.enqueue(FulfilOrderJob, { accountId, orderId });
      tx.write(sql`INSERT INTO accounts (name, plan) VALUES ('unit-of-work', 'no-such-plan')`);
    });
    await expect(work).rejects.toThrow(/violates check constraint/);
    expect(await left(orderId)).toEqual({ events: 0, jobs: 0, queued: false });
  });
});
