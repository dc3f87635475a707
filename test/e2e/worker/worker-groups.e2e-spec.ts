import { INestApplicationContext } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { eventually, HttpClient } from '../../support/http';
import { closeAll, RunningApi, startApiWithAccount, startWorker } from '../../support/test-apps';

const WORKER_MAIN = join(__dirname, '..', '..', '..', 'dist', 'apps', 'worker', 'src', 'main.js');

describe('worker groups (WORKER_QUEUES)', () => {
  let api: RunningApi;
  let http: HttpClient;
  const workers: INestApplicationContext[] = [];

  beforeAll(async () => {
    ({ api, http } = await startApiWithAccount());
  });
  afterAll(() => closeAll([...workers.map((w) => () => w.close()), () => api?.close()]));

  it('runs only the listed queues: a webhooks worker leaves messages queued, a messages worker processes them', async () => {
    // No sweep in the way: only the queue workers are under test.
    const noSweep = { SWEEP_INTERVAL_MS: '600000' };
    workers.push(await startWorker({ ...noSweep, WORKER_QUEUES: 'webhooks' }));
    const { id } = (await http.post('/v1/messages', { message: 'for the messages group' })).body;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await http.get(`/v1/messages/${id}`)).body.status).toBe('queued');

    workers.push(await startWorker({ ...noSweep, WORKER_QUEUES: 'messages, events' }));
    await eventually(async () => (await http.get(`/v1/messages/${id}`)).body.status === 'processed', 10_000);
  });

  it('refuses to start with one line naming WORKER_QUEUES when it lists an unknown queue', () => {
    const run = spawnSync(process.execPath, [WORKER_MAIN], {
      env: { ...process.env, WORKER_QUEUES: 'messages,mesages' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      'worker failed to start: WORKER_QUEUES: unknown queue mesages (known: messages, fulfilment, events, webhooks, maintenance)',
    ]);
  });
});
