import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { sweepRequeued } from '@app/jobs';
import { eventually, HttpClient } from '../../support/http';
import { OwnStores } from '../../support/own-stores';
import { sweepPasses } from '../../support/quiescence';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';

/** Every job the sweep of the workers in this process gave back so far, all sources. */
const requeuedSoFar = async () => (await sweepRequeued().get()).values.reduce((sum, v) => sum + v.value, 0);

describe('lost-job sweep with two workers', () => {
  let api: RunningApi;
  let db: DataSource;
  let workers: INestApplicationContext[] = [];
  let stores: OwnStores;

  beforeAll(async () => {
    // Its own stores: what the sweep gives back is this file's alone, whatever other files left open.
    stores = await OwnStores.start('sweep');
    api = await startApi(stores.env);
    db = api.app.get(DataSource);
  });
  afterEach(async () => {
    await closeAll(workers.map((w) => () => w.close()));
    workers = [];
  });
  afterAll(() => closeAll([() => api?.close(), () => stores?.stop()]));

  const startTwo = async () => {
    // Rows become due for the sweep this soon, and it passes this often: a backlog in hand is
    // checked many times over while the test runs.
    const env = { ...stores.env, SWEEP_INTERVAL_MS: '200' };
    workers = await Promise.all([startWorker(env), startWorker(env)]);
  };
  const processedOnce = async (ids: string[]) => {
    const rows: { n: number }[] = await db.query(
      `SELECT count(e.id)::int AS n FROM unnest($1::text[]) AS m(id)
         LEFT JOIN events e ON e.resource_type = 'message' AND e.resource_id = m.id AND e.type = 'message.processed'
        GROUP BY m.id`,
      [ids],
    );
    return rows.every((r) => r.n === 1);
  };

  it('gives back no job while messages flow and none is lost', async () => {
    await startTwo();
    const { apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    const http = new HttpClient(api.url, apiKey);
    const before = await requeuedSoFar();
    const ids: string[] = [];
    for (let round = 0; round < 30; round++) {
      const accepted = await Promise.all(
        Array.from({ length: 40 }, (_, i) => http.post('/v1/messages', { message: `flow ${round}.${i}` })),
      );
      ids.push(...accepted.map((r) => r.body.id as string));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await eventually(() => processedOnce(ids), 30_000);
    // Two more passes of each worker over whatever is still open.
    await Promise.all(workers.map((w) => sweepPasses(w, 2)));
    expect((await requeuedSoFar()) - before).toBe(0);
  });

  it('splits a large loss between the workers: each lost message given back once and processed once', async () => {
    const { accountId } = await createAccount(api);
    // Accepted a minute ago, their jobs never reached Redis (or Redis lost them).
    const lost: { id: string }[] = await db.query(
      `INSERT INTO messages (id, account_id, message, status, attempts, created_at)
       SELECT 'msg_' || substr(md5(random()::text || g::text), 1, 28), $1, 'lost ' || g, 'queued', 0, now() - interval '1 minute'
         FROM generate_series(1, 3000) AS g
       RETURNING id`,
      [accountId],
    );
    const ids = lost.map((r) => r.id);
    const before = await requeuedSoFar();
    await startTwo();
    await eventually(() => processedOnce(ids), 30_000);
    expect((await requeuedSoFar()) - before).toBe(ids.length);
  });
});
