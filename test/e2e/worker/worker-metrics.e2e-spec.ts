import { getQueueToken } from '@nestjs/bullmq';
import { INestApplicationContext } from '@nestjs/common';
import { Queue } from 'bullmq';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { EventQueue } from '@app/events';
import { MessageQueue } from '@app/messages';
import { PinoNestLogger, rootLogger } from '@app/observability';
import { FulfilmentQueue } from '@app/store';
import { WebhookQueue } from '@app/webhooks';
import { OpsServerService } from '../../../apps/worker/src/ops/ops-server.service';
import { JobCatalog } from '@app/jobs';
import { WORKER_FEATURES } from '../../../apps/worker/src/worker.module';
import { OwnStores } from '../../support/own-stores';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { eventually, HttpClient } from '../../support/http';
import { TcpProxy } from '../../support/tcp-proxy';
import { WebhookReceiver } from '@app/testing';

const LOG_FILE = join(__dirname, '..', '..', 'artifacts', 'worker-metrics.log');
/** Completed with DATABASE_URL and REDIS_URL of the file's own stores in beforeAll. */
const ENV: Record<string, string> = {
  ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
  WEBHOOK_BACKOFF_MS: '100',
  // A receiver that always fails is given up within a second or so.
  WEBHOOK_MAX_AGE_SECONDS: '1',
  JOB_ATTEMPTS: '2',
  SWEEP_INTERVAL_MS: '500',
  LOG_FILE,
};

type Labels = Record<string, string>;
interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

class Scrape {
  constructor(readonly samples: Sample[]) {}

  /** The sample with exactly these labels (histogram buckets excepted), or undefined. */
  value(name: string, labels: Labels = {}): number | undefined {
    const want = JSON.stringify(Object.entries(labels).sort());
    return this.samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
  }

  /** Like value(), 0 when absent: for counters and histogram counts compared across scrapes. */
  count(name: string, labels: Labels = {}): number {
    return this.value(name, labels) ?? 0;
  }
}

describe('worker metrics and logs', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  let http: HttpClient;
  let db: DataSource;
  const receivers: WebhookReceiver[] = [];
  let stores: OwnStores;

  async function scrape(app = worker): Promise<Scrape> {
    const res = await fetch(`http://127.0.0.1:${app.get(OpsServerService).port()}/metrics`);
    expect(res.status).toBe(200);
    return new Scrape(parse(await res.text()));
  }

  async function receiver(respond?: (n: number) => number): Promise<WebhookReceiver> {
    const r = await new WebhookReceiver(respond).start();
    receivers.push(r);
    return r;
  }

  async function subscribe(url: string): Promise<number> {
    const res = await http.post('/v1/webhooks', { url, events: ['api_key.created'] });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  const postMessage = async (message: string): Promise<string> => {
    const res = await http.post('/v1/messages', { message });
    expect(res.status).toBe(202);
    return res.body.id;
  };
  const messageStatus = async (id: string) => (await http.get(`/v1/messages/${id}`)).body.status as string;

  /** The worker's JSON log lines with this message. */
  async function logLines(msg: string): Promise<Record<string, unknown>[]> {
    await new Promise((resolve) => rootLogger(worker.get(AppConfig), 'worker').flush(resolve));
    const text = await readFile(LOG_FILE, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((l) => l.includes(msg))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  beforeAll(async () => {
    await rm(LOG_FILE, { force: true });
    // Its own stores: the sweep's counts are this file's alone, whatever other files left open.
    stores = await OwnStores.start('worker_metrics');
    Object.assign(ENV, stores.env);
    api = await startApi(ENV);
    worker = await startWorker(ENV);
    // As apps/worker/src/main.ts does: the worker's log lines go to its JSON log.
    worker.useLogger(new PinoNestLogger(rootLogger(worker.get(AppConfig), 'worker')));
    const account = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    http = new HttpClient(api.url, account.apiKey);
    db = api.app.get(DataSource);
  });
  afterAll(() =>
    closeAll([
      () => Promise.all(receivers.map((r) => r.close())),
      () => worker?.close(),
      () => api?.close(),
      () => stores?.stop(),
    ]),
  );

  it('counts, times and measures the lag of the jobs of every queue', async () => {
    const before = await scrape();
    const ids = await Promise.all([1, 2, 3, 4, 5].map((n) => postMessage(`hello ${n}`)));
    const category = (await http.post('/v1/categories', { name: 'Metrics' })).body.id;
    const pet = (await http.post('/v1/pets', { name: 'Rex', categoryId: category })).body.id;
    const order = await http.post('/v1/store/orders', { petId: pet, quantity: 1 });
    expect(order.status).toBe(201);
    const hook = await receiver();
    await subscribe(hook.url);
    expect((await http.post('/v1/keys', { name: 'metrics' })).status).toBe(201);

    await eventually(async () => (await Promise.all(ids.map(messageStatus))).every((s) => s === 'processed'));
    await eventually(async () => (await http.get(`/v1/store/orders/${order.body.id}`)).body.complete);
    await eventually(async () => hook.requests.length === 1);

    const after = await eventually(async () => {
      const s = await scrape();
      return s.count('petstore_jobs_completed_total', { queue: 'webhooks' }) >
        before.count('petstore_jobs_completed_total', { queue: 'webhooks' })
        ? s
        : null;
    });
    const delta = (name: string, queue: string) => after.count(name, { queue }) - before.count(name, { queue });
    expect(delta('petstore_jobs_completed_total', 'messages')).toBeGreaterThanOrEqual(5);
    // The queues this traffic reaches (the maintenance queue runs on schedules only).
    for (const { name: queue } of [MessageQueue, FulfilmentQueue, EventQueue, WebhookQueue]) {
      expect(delta('petstore_jobs_completed_total', queue)).toBeGreaterThanOrEqual(1);
      expect(delta('petstore_job_duration_seconds_count', queue)).toBeGreaterThanOrEqual(1);
      expect(delta('petstore_job_lag_seconds_count', queue)).toBeGreaterThanOrEqual(1);
      // Plausible (seconds, not milliseconds): these jobs ran within seconds of being due, on a busy
      // 2-core machine too.
      const meanLag = delta('petstore_job_lag_seconds_sum', queue) / delta('petstore_job_lag_seconds_count', queue);
      expect(meanLag).toBeGreaterThanOrEqual(0);
      expect(meanLag).toBeLessThan(30);
      expect(after.value('petstore_job_duration_seconds_bucket', { queue, le: '+Inf' })).toBe(
        after.value('petstore_job_duration_seconds_count', { queue }),
      );
    }
    const durationSum = after.count('petstore_job_duration_seconds_sum', { queue: 'messages' });
    expect(durationSum / after.count('petstore_job_duration_seconds_count', { queue: 'messages' })).toBeLessThan(2);
  });

  it('counts a job failing its last attempt as final and logs it once, with its reason and without the payload', async () => {
    const before = await scrape();
    const id = await postMessage('poison: secret-payload-7f3a');
    await eventually(async () => (await messageStatus(id)) === 'failed', 15_000);
    const after = await eventually(async () => {
      const s = await scrape();
      return s.count('petstore_jobs_failed_total', { queue: 'messages', final: 'true' }) >
        before.count('petstore_jobs_failed_total', { queue: 'messages', final: 'true' })
        ? s
        : null;
    });
    const failed = (final: string) =>
      after.count('petstore_jobs_failed_total', { queue: 'messages', final }) -
      before.count('petstore_jobs_failed_total', { queue: 'messages', final });
    // JOB_ATTEMPTS=2: one failure with an attempt left, then the final one.
    expect({ nonFinal: failed('false'), final: failed('true') }).toEqual({ nonFinal: 1, final: 1 });

    const lines = (await logLines('job failed on its final attempt')).filter((l) => l.jobId === id);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        queue: 'messages',
        job: 'message.process-batch',
        jobId: id,
        reason: expect.stringContaining('rejected by the processor'),
      }),
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/secret-payload|stack|\.ts:\d/);
  });

  it('exports every queue, outcome and sweep source series from the start, so a first increase is visible', async () => {
    const s = await eventually(async () => {
      const scraped = await scrape();
      return scraped.value('petstore_sweep_jobs_requeued_total', { source: 'orders' }) !== undefined ? scraped : null;
    });
    for (const queue of new JobCatalog(WORKER_FEATURES).queues) {
      expect(s.value('petstore_jobs_completed_total', { queue })).toBeDefined();
      for (const final of ['true', 'false'])
        expect(s.value('petstore_jobs_failed_total', { queue, final })).toBeDefined();
    }
    for (const outcome of ['delivered', 'retry', 'failed', 'refused'])
      expect(s.value('petstore_webhook_deliveries_total', { outcome })).toBeDefined();
    for (const source of ['orders', 'messages', 'events', 'webhook_deliveries'])
      expect(s.value('petstore_sweep_jobs_requeued_total', { source })).toBeDefined();
  });

  it('counts webhook deliveries by outcome: delivered, retry and failed', async () => {
    const before = await scrape();
    const flaky = await receiver((n) => (n === 1 ? 500 : 200));
    const broken = await receiver(() => 500);
    await subscribe(flaky.url);
    const brokenHook = await subscribe(broken.url);
    expect((await http.post('/v1/keys', { name: 'outcomes' })).status).toBe(201);
    await eventually(async () => flaky.requests.length === 2);
    const deliveryStatus = async (webhookId: number) =>
      (await db.query('SELECT status FROM webhook_deliveries WHERE webhook_id = $1', [webhookId]))[0]?.status;
    await eventually(async () => (await deliveryStatus(brokenHook)) === 'failed');

    const after = await scrape();
    const outcome = (o: string) =>
      after.count('petstore_webhook_deliveries_total', { outcome: o }) -
      before.count('petstore_webhook_deliveries_total', { outcome: o });
    expect(outcome('delivered')).toBeGreaterThanOrEqual(1);
    // The flaky receiver's first answer, and every answer of the broken one but its last.
    expect(outcome('retry')).toBe(1 + broken.requests.length - 1);
    expect(outcome('failed')).toBe(1);
    expect(outcome('refused')).toBe(0);
  });

  it('counts a delivery to a target the SSRF guard refuses as refused', async () => {
    const hook = await receiver();
    const webhookId = await subscribe(hook.url);
    // A worker that, unlike the API that accepted the URL, refuses private addresses.
    await worker.close();
    worker = await startWorker({ ...ENV, ALLOW_PRIVATE_WEBHOOK_URLS: 'false' });
    const before = await scrape();
    expect((await http.post(`/v1/webhooks/${webhookId}/test`)).status).toBe(202);
    const after = await eventually(async () => {
      const s = await scrape();
      return s.count('petstore_webhook_deliveries_total', { outcome: 'refused' }) >
        before.count('petstore_webhook_deliveries_total', { outcome: 'refused' })
        ? s
        : null;
    });
    expect(after.count('petstore_webhook_deliveries_total', { outcome: 'refused' })).toBe(
      before.count('petstore_webhook_deliveries_total', { outcome: 'refused' }) + 1,
    );
    expect(hook.requests).toEqual([]);
  });

  it('counts the jobs the lost-job sweep gives back, by source', async () => {
    const before = await scrape();
    await worker.close(); // no worker takes the job before it is lost
    const id = await postMessage('lost');
    const queue = api.app.get<Queue>(getQueueToken(MessageQueue.name), { strict: false });
    await eventually(async () => (await queue.getJobState(id)) === 'waiting');
    // Once its outbox row is gone (deleted shortly after dispatch), only Redis had the job.
    await eventually(
      async () => (await db.query('SELECT count(*)::int AS n FROM outbox WHERE job_id = $1', [id]))[0].n === 0,
    );
    expect(await queue.remove(id)).toBe(1);
    worker = await startWorker(ENV);
    await eventually(async () => (await messageStatus(id)) === 'processed');
    const after = await scrape();
    expect(
      after.count('petstore_sweep_jobs_requeued_total', { source: 'messages' }) -
        before.count('petstore_sweep_jobs_requeued_total', { source: 'messages' }),
    ).toBe(1);
  });

  it('reads job counts per queue and state, and the outbox backlog, at scrape time', async () => {
    const s = await scrape();
    for (const queue of new JobCatalog(WORKER_FEATURES).queues) {
      for (const state of ['waiting', 'active', 'delayed', 'failed']) {
        expect(s.value('petstore_queue_jobs', { queue, state })).toBeGreaterThanOrEqual(0);
      }
    }
    const messages = api.app.get<Queue>(getQueueToken(MessageQueue.name), { strict: false });
    expect(s.value('petstore_queue_jobs', { queue: 'messages', state: 'failed' })).toBe(
      await messages.getFailedCount(),
    );

    // A row older than the relay's grace, left there by nobody relaying it: the worker is stopped.
    await worker.close();
    await db.query(
      `INSERT INTO outbox (queue, job_name, job_id, payload, created_at)
       VALUES ('messages', 'message.process', 'metrics-probe', '{}', now() - interval '30 seconds')`,
    );
    try {
      worker = await startWorker({ ...ENV, OUTBOX_RELAY_INTERVAL_MS: '60000' });
      const backlog = await scrape();
      expect(backlog.value('petstore_outbox_rows_waiting')).toBeGreaterThanOrEqual(1);
      expect(backlog.value('petstore_outbox_oldest_row_age_seconds')).toBeGreaterThanOrEqual(30);
    } finally {
      await db.query(`DELETE FROM outbox WHERE job_id = 'metrics-probe'`);
    }
  });

  it('answers a scrape within its timeout while Redis is away, keeping the last queue counts', async () => {
    await worker.close();
    const proxy = await TcpProxy.inFrontOf(api.config.redisUrl);
    worker = await startWorker({ ...ENV, REDIS_URL: proxy.url });
    try {
      const queueJobs = (s: Scrape) => s.samples.filter((x) => x.name === 'petstore_queue_jobs');
      const before = queueJobs(await scrape());
      expect(before).toHaveLength(new JobCatalog(WORKER_FEATURES).queues.length * 4); // every queue, every state
      await proxy.stop();
      const started = Date.now();
      const during = await scrape();
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(queueJobs(during)).toEqual(before);
      await proxy.restart();
      // Closed only once Redis serves it again: closing mid-reconnect rejects the commands its
      // clients still queue, some of which nobody awaits (a flake: about 1 run in 10).
      const ready = `http://127.0.0.1:${worker.get(OpsServerService).port()}/health/ready`;
      await eventually(async () => (await fetch(ready)).status === 200);
      await eventually(async () => (await scrape()).samples.some((x) => x.name === 'petstore_queue_jobs'));
    } finally {
      await worker.close();
      await proxy.stop();
    }
  });
});
