import { getQueueToken } from '@nestjs/bullmq';
import { INestApplicationContext } from '@nestjs/common';
import { Queue, QueueEvents } from 'bullmq';
import { ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { OutboxRelayService } from '@app/jobs';
import { MessageQueue } from '@app/messages';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { HttpClient, HttpResponse, eventually } from '../../support/http';
import { TcpProxy } from '../../support/tcp-proxy';
import { expectErrorBody } from '../../support/expect-error';
import { passes } from '../../support/quiescence';

const ID = /^msg_[0-9a-f]{28}$/;
const ATTEMPTS = 3;
const WORKER_MAIN = join(__dirname, '..', '..', '..', 'dist', 'apps', 'worker', 'src', 'main.js');
// Every worker of this file, in process or not: a killed worker's jobs are retried within seconds.
// (BullMQ runs one stalled check per queue per period, so one slow worker would slow them all.)
const FAST_RECOVERY = { JOB_LOCK_MS: '2000', SWEEP_INTERVAL_MS: '500' };

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('messages: durable queued acceptance and processing', () => {
  let api: RunningApi;
  let http: HttpClient;
  let db: DataSource;
  let worker: INestApplicationContext | undefined;

  beforeAll(async () => {
    api = await startApi({ JOB_ATTEMPTS: String(ATTEMPTS) });
    db = api.app.get(DataSource);
    const { apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    http = new HttpClient(api.url, apiKey);
  });
  afterAll(() => closeAll([() => worker?.close(), () => api?.close()]));

  const post = (message: unknown) => http.post('/v1/messages', { message });
  const statuses = async (ids: string[]): Promise<Record<string, number>> => {
    const rows: { status: string; n: number }[] = await db.query(
      'SELECT status, count(*)::int AS n FROM messages WHERE id = ANY($1) GROUP BY status',
      [ids],
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  /** message.processed events per message: exactly one each means processed exactly once. */
  const processedEvents = async (ids: string[]): Promise<number[]> => {
    const rows: { n: number }[] = await db.query(
      `SELECT count(e.id)::int AS n FROM unnest($1::text[]) AS m(id)
         LEFT JOIN events e ON e.resource_type = 'message' AND e.resource_id = m.id AND e.type = 'message.processed'
        GROUP BY m.id`,
      [ids],
    );
    return rows.map((r) => r.n);
  };
  const acceptMany = async (client: HttpClient, n: number, prefix: string): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, n - i) }, (_, j) =>
          client.post('/v1/messages', { message: `${prefix} ${i + j}` }),
        ),
      );
      for (const res of batch) {
        expect(res.status).toBe(202);
        ids.push(res.body.id);
      }
    }
    return ids;
  };

  it('answers the quickstart with 202, Location and {id, message, status: queued, createdAt}, and queues the job', async () => {
    const before = Date.now();
    const res = await post('Hello, pet store!');
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'id', 'message', 'status']);
    expect(res.body).toEqual({
      id: expect.stringMatching(ID),
      message: 'Hello, pet store!',
      status: 'queued',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(res.headers.get('location')).toBe(`/v1/messages/${res.body.id}`);
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();

    const read = await http.get(res.headers.get('location') as string);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(
      expect.objectContaining({ ...res.body, attempts: 0, result: null, processedAt: null, failureReason: null }),
    );
    // Dispatched right after commit: the BullMQ job of its batch (of one) carries the message id, and the outbox
    // row goes (its DELETE follows the enqueue, after the answer: a busy machine may not have run it yet).
    const job = await api.app.get<Queue>(getQueueToken(MessageQueue.name)).getJob(res.body.id);
    expect(job?.data).toEqual({ batch: res.body.id, messages: [{ accountId: expect.any(Number), id: res.body.id }] });
    await eventually(
      async () => (await db.query('SELECT id FROM outbox WHERE job_id = $1', [res.body.id])).length === 0,
      2_000,
    );
  });

  it('answers the three 400s of the interface and the length bound, and stores nothing', async () => {
    const [{ n: before }] = await db.query('SELECT count(*)::int AS n FROM messages');
    const raw = (rawBody: string, contentType: string) =>
      http.request('POST', '/v1/messages', { rawBody, headers: { 'Content-Type': contentType } });
    expectErrorBody(await raw('{"message": ', 'application/json'), 400, 'invalid_json');
    expectErrorBody(await raw('{"message":"hi"}', 'text/plain'), 400, 'unsupported_media_type');
    expectErrorBody(await raw('message=hi', 'application/x-www-form-urlencoded'), 400, 'unsupported_media_type');
    const missing = await http.post('/v1/messages', {});
    expectErrorBody(missing, 400, 'validation_failed');
    expect(missing.body.details.map((d: { field: string }) => d.field)).toContain('message');
    for (const bad of [42, null, ['hi'], { text: 'hi' }, '', 'x'.repeat(4097), 'nul\u0000inside', '\ud800']) {
      const res = await post(bad);
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details[0].field).toBe('message');
    }
    expectErrorBody(await http.post('/v1/messages', { message: 'hi', extra: 1 }), 400, 'validation_failed');
    expectErrorBody(await http.post('/v1/messages', ['hi']), 400, 'validation_failed');
    const [{ n: after }] = await db.query('SELECT count(*)::int AS n FROM messages');
    expect(after).toBe(before);

    // The bound counts characters (code points): 4096 emoji are accepted, 4097 are not.
    expect((await post('🐈'.repeat(4096))).status).toBe(202);
    expectErrorBody(await post('🐈'.repeat(4097)), 400, 'validation_failed');
  });

  it('reads a message only in its own account, and rejects malformed ids', async () => {
    const mine = await post('only mine');
    const other = await createAccount(api);
    const stranger = new HttpClient(api.url, other.apiKey);
    expectErrorBody(await stranger.get(`/v1/messages/${mine.body.id}`), 404, 'not_found');
    expect((await stranger.get('/v1/messages')).body).toEqual([]);
    expectErrorBody(await http.get(`/v1/messages/msg_${'0'.repeat(28)}`), 404, 'not_found');
    expectErrorBody(await http.get('/v1/messages/nope'), 400, 'invalid_parameter');
    expectErrorBody(await http.get('/v1/messages?after=nope'), 400, 'invalid_parameter');
    expectErrorBody(await http.get('/v1/messages?status=done'), 400, 'invalid_parameter');
    expectErrorBody(await http.get('/v1/messages?limit=101'), 400, 'invalid_parameter');
  });

  it('lists in keyset pages with Link rel="next"', async () => {
    const { apiKey } = await createAccount(api);
    const client = new HttpClient(api.url, apiKey);
    const ids = await acceptMany(client, 5, 'page');
    const seen: string[] = [];
    let path: string | null = '/v1/messages?limit=2';
    let pages = 0;
    while (path) {
      const res: HttpResponse<any[]> = await client.get(path);
      expect(res.status).toBe(200);
      seen.push(...res.body.map((m: { id: string }) => m.id));
      path = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].sort());
    const queued = await client.get('/v1/messages?status=queued&limit=100');
    expect(queued.body).toHaveLength(5);
    expect((await client.get('/v1/messages?status=processed')).body).toEqual([]);
  });

  it('with order=newest lists the latest first, its Link going on towards older ones', async () => {
    const { apiKey } = await createAccount(api);
    const client = new HttpClient(api.url, apiKey);
    const ids = await acceptMany(client, 5, 'newest');
    const first = await client.get<{ id: string }[]>('/v1/messages?order=newest&limit=3');
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
    expect(next).toContain('order=newest');
    const second = await client.get<{ id: string }[]>(next);
    expect([...first.body, ...second.body].map((m) => m.id)).toEqual([...ids].sort().reverse());
    expect(second.headers.get('link')).toBeNull();
  });

  it('processes the 100 messages accepted while no worker ran once one starts, each exactly once', async () => {
    const ids = await acceptMany(http, 100, 'backlog');
    // Handed to the queue (the outbox rows go once enqueued), where no worker takes them.
    await eventually(async () => (await db.query('SELECT 1 FROM outbox WHERE job_id = ANY($1)', [ids])).length === 0);
    expect(await statuses(ids)).toEqual({ queued: 100 });
    // Concurrent accepts share statements (group commit): each id must still hold its own text.
    const stored: { id: string; message: string }[] = await db.query(
      'SELECT id, message FROM messages WHERE id = ANY($1)',
      [ids],
    );
    const textById = new Map(stored.map((r) => [r.id, r.message]));
    expect(ids.map((id) => textById.get(id))).toEqual(ids.map((_, i) => `backlog ${i}`));

    worker = await startWorker(FAST_RECOVERY);
    await eventually(async () => (await statuses(ids)).processed === 100, 20_000);
    expect(await processedEvents(ids)).toEqual(Array(100).fill(1));
    const one = await http.get(`/v1/messages/${ids[7]}`);
    expect(one.body).toEqual(
      expect.objectContaining({
        status: 'processed',
        attempts: 1,
        result: { characters: 'backlog 7'.length, sha256: sha256('backlog 7') },
        processedAt: expect.any(String),
        failureReason: null,
      }),
    );
    const processed = await http.get('/v1/messages?status=processed&limit=100');
    expect(processed.body.every((m: { status: string }) => m.status === 'processed')).toBe(true);
    expect(processed.headers.get('link')).toContain('status=processed');
  });

  it('finishes a backlog in batches: many messages commit in one transaction, each once with one event', async () => {
    await worker?.close();
    const ids = await acceptMany(http, 100, 'batched');
    worker = await startWorker(FAST_RECOVERY);
    await eventually(async () => (await statuses(ids)).processed === 100, 20_000);
    expect(await processedEvents(ids)).toEqual(Array(100).fill(1));
    // now() is the transaction's start: messages finished in one transaction share processed_at.
    const [{ commits }] = await db.query(
      'SELECT count(DISTINCT processed_at)::int AS commits FROM messages WHERE id = ANY($1)',
      [ids],
    );
    expect(commits).toBeLessThanOrEqual(20);
  });

  it('keeps no completed message job in Redis: a processed message needs none', async () => {
    const ids = await acceptMany(http, 20, 'dropped');
    await eventually(async () => (await statuses(ids)).processed === 20, 10_000);
    const queue = api.app.get<Queue>(getQueueToken(MessageQueue.name));
    await eventually(async () => (await Promise.all(ids.map((id) => queue.getJob(id)))).every((j) => !j), 5_000);
    expect(await queue.getCompletedCount()).toBe(0);
  });

  it('gives a message whose job was lost (Redis flushed) its job back, and processes it once', async () => {
    await worker?.close();
    const res = await post('lost job');
    expect(res.status).toBe(202);
    const queue = api.app.get<Queue>(getQueueToken(MessageQueue.name));
    await eventually(async () => (await queue.getJobState(res.body.id)) === 'waiting');
    expect(await queue.remove(res.body.id)).toBe(1); // lost, as if Redis had been flushed
    // The outbox row of a dispatched job is deleted shortly after (batched): then only Redis had it.
    await eventually(
      async () => (await db.query('SELECT count(*)::int AS n FROM outbox WHERE job_id = $1', [res.body.id]))[0].n === 0,
    );

    worker = await startWorker(FAST_RECOVERY);
    await eventually(async () => (await statuses([res.body.id])).processed === 1, 10_000);
    expect(await processedEvents([res.body.id])).toEqual([1]);
  });

  it("gives a lost batch's messages their one job back, and processes each once", async () => {
    await worker?.close();
    const ids = await acceptMany(http, 25, 'lost batch');
    const [batch]: { jobId: string; ids: string[] }[] = await db.query(
      `SELECT job_id AS "jobId", array_agg(id) AS ids FROM messages WHERE id = ANY($1) AND job_id IS NOT NULL
        GROUP BY job_id ORDER BY count(*) DESC LIMIT 1`,
      [ids],
    );
    expect(batch).toBeDefined(); // 25 accepts at once share statements
    const queue = api.app.get<Queue>(getQueueToken(MessageQueue.name));
    await eventually(async () => (await queue.getJobState(batch.jobId)) === 'waiting');
    await eventually(
      async () => (await db.query('SELECT count(*)::int AS n FROM outbox WHERE job_id = $1', [batch.jobId]))[0].n === 0,
    );
    expect(await queue.remove(batch.jobId)).toBe(1); // lost, as if Redis had been flushed

    const added: string[] = [];
    const queueEvents = new QueueEvents(MessageQueue.name, {
      connection: queue.opts.connection,
      prefix: queue.opts.prefix,
    });
    queueEvents.on('added', ({ jobId }) => added.push(jobId));
    await queueEvents.waitUntilReady();
    try {
      worker = await startWorker(FAST_RECOVERY);
      await eventually(async () => (await statuses(ids)).processed === 25, 10_000);
      expect(await processedEvents(ids)).toEqual(Array(25).fill(1));
      expect(added.filter((id) => [batch.jobId, ...batch.ids].includes(id))).toEqual([batch.jobId]);
    } finally {
      await queueEvents.close();
    }
  });

  it('retries a message the processor rejects with backoff, then marks it failed with the reason', async () => {
    const res = await post('poison: always rejected');
    const failed = await eventually(async () => {
      const r = await http.get(`/v1/messages/${res.body.id}`);
      return r.body.status === 'failed' ? r.body : null;
    });
    expect(failed).toEqual(
      expect.objectContaining({
        attempts: ATTEMPTS,
        result: null,
        processedAt: null,
        failedAt: expect.any(String),
        failureReason: expect.stringContaining('poison:'),
      }),
    );
    const events = await db.query('SELECT type FROM events WHERE resource_type = $1 AND resource_id = $2', [
      'message',
      res.body.id,
    ]);
    expect(events).toEqual([{ type: 'message.failed' }]);
  });

  it('accepts messages (202, quickly) while Redis is unreachable and processes them once it returns', async () => {
    await worker?.close();
    worker = undefined;
    const proxy = await TcpProxy.inFrontOf(api.config.redisUrl);
    const viaProxy = { REDIS_URL: proxy.url };
    const api2 = await startApi(viaProxy);
    const worker2 = await startWorker({ ...viaProxy, ...FAST_RECOVERY });
    try {
      const client = new HttpClient(api2.url, http.defaultKey);
      expect((await client.get('/v1/account')).status).toBe(200);
      await proxy.stop();
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const started = Date.now();
        const res = await client.post(
          '/v1/messages',
          { message: `during outage ${i}` },
          { headers: i === 0 ? { 'Idempotency-Key': 'outage-0' } : {} },
        );
        expect(res.status).toBe(202);
        expect(Date.now() - started).toBeLessThan(1_500);
        ids.push(res.body.id);
      }
      // Durable: every accepted message has its outbox row, waiting for the relay.
      const outbox = await db.query('SELECT job_id FROM outbox WHERE job_id = ANY($1)', [ids]);
      expect(outbox).toHaveLength(10);
      await passes(worker2.get<OutboxRelayService>(OutboxRelayService), 'drain', 2); // the relay tries, and leaves them queued
      expect(await statuses(ids)).toEqual({ queued: 10 });

      await proxy.restart();
      await eventually(async () => (await statuses(ids)).processed === 10, 20_000);
      expect(await processedEvents(ids)).toEqual(Array(10).fill(1));
      // A relay pass can see its jobs processed before its own DELETE commits, or lose that
      // DELETE to the returning Redis; the next pass re-enqueues (a no-op) and deletes them.
      await eventually(
        async () => (await db.query('SELECT 1 FROM outbox WHERE job_id = ANY($1)', [ids])).length === 0,
        10_000,
      );
    } finally {
      await worker2.close();
      await api2.close();
      await proxy.stop();
    }
  });

  describe('a worker process killed with SIGKILL mid-burst', () => {
    const children: ChildProcess[] = [];
    const spawnWorker = () => {
      const child = spawn(process.execPath, [WORKER_MAIN], {
        // A worker holds two batches at once: the burst must outlast them, or one worker takes it whole before the kill.
        env: { ...process.env, ...FAST_RECOVERY, WORKER_PORT: '0', LOG_LEVEL: 'warn', WORKER_BATCH_SIZE: '25' },
        stdio: 'ignore',
      });
      children.push(child);
      return child;
    };
    afterAll(() => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

    it('loses nothing and processes nothing twice', async () => {
      expect(existsSync(WORKER_MAIN)).toBe(true); // npm run build
      const ids = await acceptMany(http, 200, 'burst');
      const first = spawnWorker();
      await eventually(async () => ((await statuses(ids)).processed ?? 0) >= 20, 20_000, 10);
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      const atKill = await statuses(ids);
      expect(atKill.processed).toBeLessThan(200);

      const second = spawnWorker();
      await eventually(async () => (await statuses(ids)).processed === 200, 30_000);
      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));
      expect(await processedEvents(ids)).toEqual(Array(200).fill(1));
      const results = await db.query(
        'SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND sha256 IS NOT NULL AND processed_at IS NOT NULL',
        [ids],
      );
      expect(results).toEqual([{ n: 200 }]);
    });
  });
});
