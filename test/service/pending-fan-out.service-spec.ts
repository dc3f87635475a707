import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { JobRun } from '@app/jobs';
import { EventFanOutService, WebhooksModule } from '@app/webhooks';
import { ServiceFactory } from './service.factory';

/** The pending fan-out of one account's backlog (EventFanOutService.fanOutPending) on Postgres. */
describe('the pending fan-out (service tier: Postgres)', () => {
  let factory: ServiceFactory;
  let db: DataSource;

  beforeAll(async () => {
    factory = await ServiceFactory.start(WebhooksModule);
    db = factory.db;
  });
  afterAll(() => factory?.close());

  /** Sessions whose page statement waits on a lock (the delivery's foreign key to a webhook row held FOR UPDATE). */
  const waitingPages = async (): Promise<number> => {
    const [{ n }] = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH page AS%'`,
    );
    return n;
  };

  it("writes a backlog's pages two at a time after its first page, each event's deliveries once", async () => {
    const accountId = await factory.account();
    const pageSize = factory.get(AppConfig).jobs.batchSize;
    const webhook = await factory.webhook(accountId);
    const insertEvents = (type: string, count: number) =>
      db.query(
        `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out)
         SELECT $1, $2, 'pet', g::text, 1, '{}', false FROM generate_series(1, $3) g`,
        [accountId, type, count],
      );
    // The first page (events no webhook takes) writes no delivery; the two after it wait on the webhook's row.
    await insertEvents('pet.deleted', pageSize);
    const events = 2 * pageSize;
    await insertEvents('pet.created', events);
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE', [webhook.id]);
    const run: JobRun = { releaseDeduplication: () => Promise.resolve() } as JobRun;
    const made = factory.get(EventFanOutService).fanOutPending({ accountId, eventId: 0 }, run);
    made.catch(() => undefined);
    let seen = 0;
    try {
      for (const until = Date.now() + 10_000; seen < 2 && Date.now() < until;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        seen = await waitingPages();
      }
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect({ pagesInFlight: seen, deliveries: await made }).toEqual({ pagesInFlight: 2, deliveries: events });
    const [{ total, distinct }] = await db.query(
      `SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct FROM webhook_deliveries
        WHERE account_id = $1`,
      [accountId],
    );
    expect({ total, distinct }).toEqual({ total: events, distinct: events });
  });

  it('writes a short backlog in one page', async () => {
    const accountId = await factory.account();
    await factory.webhook(accountId);
    await db.query(
      `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out)
       SELECT $1, 'pet.created', 'pet', g::text, 1, '{}', false FROM generate_series(1, 5) g`,
      [accountId],
    );
    const run: JobRun = { releaseDeduplication: () => Promise.resolve() } as JobRun;
    expect(await factory.get(EventFanOutService).fanOutPending({ accountId, eventId: 0 }, run)).toBe(5);
    const batches = await db.query(`SELECT DISTINCT created_at FROM webhook_deliveries WHERE account_id = $1`, [
      accountId,
    ]);
    expect(batches).toHaveLength(1);
  });
});
