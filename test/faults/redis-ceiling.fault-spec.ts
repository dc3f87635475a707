import { Client } from 'pg';
import { startLoad } from './support/load';
import { startRedisServer } from '../support/own-stores';
import { createAccount, ServiceProcess, stopAll } from './support/service-process';

const databaseUrl = process.env.DATABASE_URL as string;
/** Well past what fits in MAXMEMORY as queued jobs (about 0.9 kB each). */
const MESSAGES = 12_000;
const MAXMEMORY = '8mb';

describe('faults: a backlog that reaches Redis maxmemory (noeviction)', () => {
  let redis: Awaited<ReturnType<typeof startRedisServer>> | undefined;
  let redisUrl: string;
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let db: Client;
  let apiKey: string;
  let accountId: number;

  beforeAll(async () => {
    // Its own Redis: maxmemory is server-wide, and the shared one must not be touched.
    redis = await startRedisServer(['--maxmemory', MAXMEMORY, '--maxmemory-policy', 'noeviction']);
    redisUrl = redis.url;
    ({ apiKey, accountId } = await createAccount(databaseUrl, 'faults redis ceiling'));
    api = await ServiceProcess.start('api', { REDIS_URL: redisUrl });
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await stopAll([api, worker]);
    redis?.stop();
    await db?.end();
  });

  it('accepts every message, keeps what Redis cannot hold in the outbox, and a worker then processes each once', async () => {
    const load = startLoad({
      url: (api as ServiceProcess).url,
      apiKey,
      concurrency: 16,
      next: (i) => ({ method: 'POST', path: '/v1/messages', body: { message: `ceiling ${i}` } }),
    });
    let sent: number;
    do {
      await new Promise((r) => setTimeout(r, 200));
      sent = load.samples.length;
    } while (sent < MESSAGES);
    const samples = await load.stop();
    expect(samples.filter((s) => s.status !== 202)).toEqual([]);
    const { rows: waiting } = await db.query(`SELECT count(*)::int AS n FROM outbox WHERE queue = 'messages'`);
    expect(waiting[0].n).toBeGreaterThan(0);

    worker = await ServiceProcess.start('worker', { REDIS_URL: redisUrl });
    const counts = async () =>
      (
        await db.query(
          `SELECT count(*) FILTER (WHERE m.status IN ('queued', 'processing'))::int AS open,
                  count(*)::int AS total,
                  (SELECT count(*)::int FROM events e
                    WHERE e.account_id = $1 AND e.type = 'message.processed') AS events
             FROM messages m WHERE m.account_id = $1`,
          [accountId],
        )
      ).rows[0];
    const deadline = Date.now() + 60_000;
    let c = await counts();
    while (c.open > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      c = await counts();
    }
    expect(c).toEqual({ open: 0, total: samples.length, events: samples.length });
  });
});
