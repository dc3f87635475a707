import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { sweepRequeued } from '@app/jobs';
import { eventually, HttpClient } from '../../support/http';
import { sweepPasses } from '../../support/quiescence';
import { closeAll, createAccount, ROOMY_LIMITS, RunningApi, startApi, startWorker } from '../../support/test-apps';

/** What the sweep of this process's worker gave back so far, for one source. */
const requeued = async (source: string) =>
  (await sweepRequeued().get()).values.find((v) => v.labels.source === source)?.value ?? 0;

/**
 * A worker that runs the sweep but consumes no queue that holds the work: every job stays waiting in BullMQ,
 * so the sweep, however often it passes, must give nothing back.
 */
describe('the lost-job sweep and jobs BullMQ still holds', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  let http: HttpClient;
  let db: DataSource;

  beforeAll(async () => {
    api = await startApi({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' });
    db = api.app.get(DataSource);
    worker = await startWorker({ WORKER_QUEUES: 'fulfilment', SWEEP_INTERVAL_MS: '300' });
    http = new HttpClient(api.url, (await createAccount(api, 'enterprise', ROOMY_LIMITS)).apiKey);
  });
  afterAll(() => closeAll([() => worker?.close(), () => api?.close()]));

  /** Passes enough that the last two began after every row was older than the sweep interval. */
  const sweepPassesOver = () => sweepPasses(worker, 3);

  it("gives back no event whose account's fan-out job is waiting, its own or one it was folded into", async () => {
    const hook = await http.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['category.created'] });
    expect(hook.status).toBe(201);
    const before = await requeued('events');
    for (const name of ['first', 'second', 'third'])
      expect((await http.post('/v1/categories', { name: `sweep ${name}` })).status).toBe(201);
    await sweepPassesOver();
    const [{ pending }] = await db.query(`SELECT count(*)::int AS pending FROM events WHERE NOT fanned_out`);
    expect(pending).toBeGreaterThanOrEqual(3);
    expect((await requeued('events')) - before).toBe(0);
  });

  it('gives back no message whose batch job is waiting', async () => {
    const before = await requeued('messages');
    const accepted = await Promise.all(
      Array.from({ length: 20 }, (_, i) => http.post('/v1/messages', { message: `${i}` })),
    );
    expect(accepted.every((r) => r.status === 202)).toBe(true);
    await eventually(async () => (await db.query(`SELECT count(*)::int AS n FROM outbox`))[0].n === 0);
    await sweepPassesOver();
    expect((await requeued('messages')) - before).toBe(0);
  });
});
