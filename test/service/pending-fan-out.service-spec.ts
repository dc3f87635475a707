import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery } from '@app/database';
import { JobRun } from '@app/jobs';
import { EventFanOutService, Webhook, webhookQueries, WebhooksModule } from '@app/webhooks';
import { featureModules, newAccount } from './feature-modules';

/** The pending fan-out of one account's backlog (EventFanOutService.fanOutPending) on Postgres. */
describe('the pending fan-out (service tier: Postgres)', () => {
  let app: INestApplicationContext;
  let db: DataSource;

  beforeAll(async () => {
    app = await featureModules(WebhooksModule);
    db = app.get(DataSource);
  });
  afterAll(() => app?.close());

  /** Sessions whose page statement waits on a lock (the delivery's foreign key to a webhook row held FOR UPDATE). */
  const waitingPages = async (): Promise<number> => {
    const [{ n }] = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH page AS%'`,
    );
    return n;
  };

  it("writes two pages of an account's backlog at once, each event's deliveries once", async () => {
    const accountId = await newAccount(app);
    const pageSize = app.get(AppConfig).jobs.batchSize;
    const hook = { url: 'https://example.com/hook', events: ['pet.created'], description: null, secret: 's1' };
    const [webhook] = await preparedQuery<Webhook>(
      db,
      webhookQueries.insert(accountId, { ...hook, createdByAdmin: false }),
    );
    const events = 3 * pageSize;
    await db.query(
      `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out)
       SELECT $1, 'pet.created', 'pet', g::text, 1, '{}', false FROM generate_series(1, $2) g`,
      [accountId, events],
    );
    // Every page's deliveries wait on the webhook's row: the pages in flight at once can be counted.
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE', [webhook.id]);
    const run: JobRun = { releaseDeduplication: () => Promise.resolve() } as JobRun;
    const made = app.get(EventFanOutService).fanOutPending({ accountId, eventId: 0 }, run);
    let seen = 0;
    try {
      for (const until = Date.now() + 3_000; seen < 2 && Date.now() < until;) {
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
});
