import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JobCatalog, queuePrefix } from '@app/jobs';
import { loadConfig } from '@app/config';
import { MessageQueue } from '@app/messages';
import { requireRedis } from '@app/lifecycle';
import { WebhookQueue } from '@app/webhooks';
import { OpsServerService } from '../../../apps/worker/src/ops/ops-server.service';
import { WORKER_FEATURES } from '../../../apps/worker/src/worker.module';
import { freePort } from '../../support/free-port';
import { eventually, HttpClient } from '../../support/http';
import { RedisCluster } from '../../support/redis-cluster';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { sweepPasses } from '../../support/quiescence';
import { TestClock } from '../../support/test-clock';
import { WebhookReceiver } from '@app/testing';

/**
 * The service on a real Redis Cluster (3 masters, a replica each, started here from the
 * machine's redis-server): REDIS_CLUSTER_NODES makes every client a cluster client.
 */
const { redisNamespace: namespace } = loadConfig();

describe('on a Redis Cluster (REDIS_CLUSTER_NODES)', () => {
  let cluster: RedisCluster;
  let apis: RunningApi[];
  let worker: INestApplicationContext;
  let workerEnv: Record<string, string>;
  let receiver: WebhookReceiver;
  let db: DataSource;

  beforeAll(async () => {
    cluster = await RedisCluster.start();
    // The seeds are the masters the failover test kills: clients must start again from the
    // nodes they learnt (a worker whose seeds were dead stopped consuming a queue for good).
    const doomed = new Set([
      await cluster.masterOf(queuePrefix(namespace, MessageQueue.name)),
      await cluster.masterOf(queuePrefix(namespace, WebhookQueue.name)),
    ]);
    // REDIS_URL names nothing: whatever still used it would fail.
    const env = {
      REDIS_CLUSTER_NODES: [...doomed].map((port) => `127.0.0.1:${port}`).join(','),
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    };
    apis = await Promise.all([startApi(env), startApi(env)]);
    workerEnv = {
      ...env,
      SWEEP_INTERVAL_MS: '1000',
      // A job the worker held when its master died stays active on the promoted replica until
      // BullMQ's stalled check returns it (2 x JOB_LOCK_MS; 60 s at the default): short here.
      JOB_LOCK_MS: '2000',
      WORKER_STALL_MS: '10000',
      // Closed after the last test has left slots without a master, the worker waits out the whole grace (10 s).
      SHUTDOWN_GRACE_MS: '1000',
    };
    worker = await startWorker(workerEnv);
    receiver = await new WebhookReceiver().start();
    db = apis[0].app.get(DataSource);
  }, 60_000);
  // Each step whatever the others do: an app left running would work on the next test file's database.
  afterAll(() =>
    closeAll([
      () => worker?.close(),
      ...(apis ?? []).map((a) => () => a.close()),
      () => receiver?.close(),
      () => cluster?.stop(),
    ]),
  );

  /** Messages and orders of one account, sent through both APIs; their ids. */
  async function sendWork(apiKey: string, count: number) {
    const [a, b] = apis.map((api) => new HttpClient(api.url, apiKey));
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) => (i % 2 ? a : b).post('/v1/messages', { message: `cluster ${i}` })),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 202));
    return answers.map((r) => r.body.id as string);
  }

  /** Queues the worker reports it has stopped consuming (petstore_queue_consumer_stalled). */
  async function stalledQueues(): Promise<string[]> {
    const metrics = await (await fetch(`http://127.0.0.1:${worker.get(OpsServerService).port()}/metrics`)).text();
    return [...metrics.matchAll(/^petstore_queue_consumer_stalled\{queue="(\w+)"\} 1$/gm)].map((m) => m[1]);
  }

  async function expectProcessedOnce(messages: string[]) {
    await eventually(async () => {
      const [{ open }] = await db.query(
        `SELECT count(*)::int AS open FROM messages WHERE id = ANY($1) AND status <> 'processed'`,
        [messages],
      );
      return open === 0;
    }, 90_000);
    const [{ processed }] = await db.query(
      `SELECT count(*)::int AS processed FROM events WHERE type = 'message.processed' AND resource_id = ANY($1)`,
      [messages],
    );
    expect(processed).toBe(messages.length);
  }

  it('answers ready on both apps', async () => {
    expect((await fetch(`${apis[0].url}/health/ready`)).status).toBe(200);
    expect((await fetch(`${apis[1].url}/health/ready`)).status).toBe(200);
  });

  it('processes messages sent through two APIs once each, and fulfils orders with their webhooks', async () => {
    const { apiKey } = await createAccount(apis[0], 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    const client = new HttpClient(apis[0].url, apiKey);
    expect((await client.post('/v1/webhooks', { url: receiver.url, events: ['order.completed'] })).status).toBe(201);
    const category = (await client.post('/v1/categories', { name: 'cluster' })).body.id;
    const pet = (await client.post('/v1/pets', { name: 'cluster pet', categoryId: category })).body.id;
    await client.put(`/v1/store/inventory/${pet}`, { quantity: 10 });
    const order = (await client.post('/v1/store/orders', { petId: pet })).body.id;

    await expectProcessedOnce(await sendWork(apiKey, 40));
    await eventually(async () => receiver.requests.length === 1, 20_000);
    const [{ complete }] = await db.query(`SELECT complete FROM orders WHERE id = $1`, [order]);
    expect(complete).toBe(true);
  });

  it("keeps each queue's keys in a slot of its own, and the queues on more than one master", async () => {
    const slots = new Map<string, Set<number>>();
    for (const port of await cluster.masters()) {
      for (const key of await cluster.keys(port, 'petstore:{*')) {
        const queue = new JobCatalog(WORKER_FEATURES).queues.find((q) =>
          key.startsWith(`${queuePrefix(namespace, q)}:`),
        );
        expect(queue).toBeDefined();
        const slot = await cluster.slotOf(key);
        slots.set(queue!, new Set([...(slots.get(queue!) ?? []), slot]));
      }
    }
    expect([...slots.values()].map((s) => s.size)).toEqual([...slots.values()].map(() => 1));
    const distinct = new Set([...slots.values()].map((s) => [...s][0]));
    expect(distinct.size).toBe(slots.size);
    const masters = new Set(
      await Promise.all(new JobCatalog(WORKER_FEATURES).queues.map((q) => cluster.masterOf(queuePrefix(namespace, q)))),
    );
    expect(masters.size).toBeGreaterThan(1);
  });

  it("shares an account's rate limit between the two APIs", async () => {
    const { apiKey } = await createAccount(apis[0], 'enterprise', { limitPerMinute: 6, limitPerDay: 1_000 });
    const [a, b] = apis.map((api) => new HttpClient(api.url, apiKey));
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await (i % 2 ? a : b).get('/v1/account')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  });

  it('bans a key through one API and the other API refuses it too', async () => {
    const clock = new TestClock();
    clock.set(Date.UTC(2031, 5, 1, 10, 0, 0));
    const env = { REDIS_CLUSTER_NODES: cluster.seeds, RATE_LIMIT_BAN_STRIKES: '2', RATE_LIMIT_BAN_SECONDS: '60' };
    const pair = await Promise.all([startApi(env, { clock }), startApi(env, { clock })]);
    try {
      const { apiKey } = await createAccount(pair[0], 'enterprise', { limitPerMinute: 1, limitPerDay: 100 });
      const [a, b] = pair.map((api) => new HttpClient(api.url, apiKey));
      expect((await a.get('/v1/account')).status).toBe(200);
      expect((await b.get('/v1/account')).body.code).toBe('rate_limit_exceeded');
      clock.advance(1_000); // a second after the first 429, refusals are strikes
      expect((await a.get('/v1/account')).body.code).toBe('rate_limit_exceeded');
      expect((await b.get('/v1/account')).body.code).toBe('api_key_banned');
      expect((await a.get('/v1/account')).body.code).toBe('api_key_banned');
    } finally {
      await Promise.all(pair.map((api) => api.close()));
    }
  });

  it('replays an idempotent request sent again to the other API', async () => {
    const { apiKey } = await createAccount(apis[0], 'business');
    const [a, b] = apis.map((api) => new HttpClient(api.url, apiKey));
    const headers = { 'Idempotency-Key': 'cluster-replay-1' };
    const first = await a.post('/v1/messages', { message: 'once' }, { headers });
    const again = await b.post('/v1/messages', { message: 'once' }, { headers });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
  });

  it('tells the other API of a revoked key over sharded pub/sub (refused well within the 1 s fallback)', async () => {
    const { apiKey } = await createAccount(apis[0], 'business');
    const key = (await new HttpClient(apis[0].url, apiKey).post('/v1/keys', { name: 'to revoke' })).body;
    const onB = new HttpClient(apis[1].url, key.secret);
    expect((await onB.get('/v1/account')).status).toBe(200);
    expect((await new HttpClient(apis[0].url, apiKey).delete(`/v1/keys/${key.id}`)).status).toBe(204);
    const start = Date.now();
    await eventually(async () => (await onB.get('/v1/account')).status === 401, 2_000, 20);
    expect(Date.now() - start).toBeLessThan(500);
  });

  it('loses and doubles nothing when masters are killed (-9) one after the other under load', async () => {
    const { apiKey } = await createAccount(apis[0], 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    const client = new HttpClient(apis[0].url, apiKey);
    expect((await client.post('/v1/webhooks', { url: receiver.url, events: ['order.completed'] })).status).toBe(201);
    const category = (await client.post('/v1/categories', { name: 'failover' })).body.id;
    const pet = (await client.post('/v1/pets', { name: 'failover pet', categoryId: category })).body.id;
    await client.put(`/v1/store/inventory/${pet}`, { quantity: 1_000 });
    const deliveredBefore = receiver.requests.length;

    // Load all along: messages and orders, through both APIs, until the cluster is whole again.
    const messages: string[] = [];
    const orders: number[] = [];
    let loading = true;
    const load = (async () => {
      for (let round = 0; loading; round++) {
        messages.push(...(await sendWork(apiKey, 10)));
        const order = await new HttpClient(apis[round % 2].url, apiKey).post('/v1/store/orders', { petId: pet });
        expect(order.status).toBe(201);
        orders.push(order.body.id);
      }
    })();
    await eventually(async () => orders.length >= 2);
    // The masters of the two busiest queues, one after the other (a majority of masters must
    // stay up to elect a replica).
    await cluster.failOver(await cluster.masterOf(queuePrefix(namespace, MessageQueue.name)));
    await cluster.failOver(await cluster.masterOf(queuePrefix(namespace, WebhookQueue.name)));
    // Rounds through the promoted masters.
    const failedOverAt = orders.length;
    await eventually(async () => orders.length >= failedOverAt + 2);
    loading = false;
    await load;

    expect(messages.length).toBeGreaterThan(20);
    await expectProcessedOnce(messages);
    await eventually(async () => {
      const [{ open }] = await db.query(
        `SELECT count(*)::int AS open FROM orders WHERE id = ANY($1) AND NOT complete`,
        [orders],
      );
      return open === 0;
    }, 90_000);
    // Each order's delivery is recorded once (after the events' fan-out), whatever Redis went through.
    const recorded = async () =>
      (
        await db.query(
          `SELECT count(*)::int AS deliveries, count(DISTINCT o.id)::int AS orders
             FROM orders o JOIN events e ON e.type = 'order.completed' AND e.resource_id = o.id::text
             JOIN webhook_deliveries d ON d.event_id = e.id
            WHERE o.id = ANY($1)`,
          [orders],
        )
      )[0] as { deliveries: number; orders: number };
    await eventually(async () => (await recorded()).deliveries >= orders.length, 90_000);
    expect(await recorded()).toEqual({ deliveries: orders.length, orders: orders.length });
    // All sent, or (the known open problem, docs/operations-at-scale.md) the webhooks consumer
    // stalled and the worker says so: the deliveries wait, pending, for a consumer.
    let stalled: string[] = [];
    await eventually(async () => {
      stalled = await stalledQueues();
      return stalled.length > 0 || receiver.requests.length - deliveredBefore >= orders.length;
    }, 45_000);
    if (stalled.length) console.warn(`known open problem: queue consumer stalled after the failover: ${stalled}`);
    // Two sweep passes more: a late duplicate would arrive here.
    await sweepPasses(worker, 2);
    const events = receiver.requests.slice(deliveredBefore).map((r) => r.headers['petstore-event-id']);
    expect(new Set(events).size).toBe(events.length);
    if (!stalled.length) expect(events).toHaveLength(orders.length);
    await eventually(async () => (await fetch(`${apis[0].url}/health/ready`)).status === 200, 20_000);
  }, 300_000);

  /** The API serves without Redis (degraded: limits per process, no idempotency), so readiness stays 200. */
  const readiness = async (api: RunningApi): Promise<{ checks: Record<string, string> }> =>
    (await fetch(`${api.url}/health/ready`)).json() as Promise<{ checks: Record<string, string> }>;

  it('reports Redis down, and a worker does not start, with REDIS_URL naming a node of the cluster', async () => {
    const nodeUrl = `redis://127.0.0.1:${cluster.aLiveNode()}`;
    const api = await startApi({ REDIS_URL: nodeUrl });
    try {
      expect(await readiness(api)).toEqual({ status: 'degraded', checks: { postgres: 'up', redis: 'down' } });
    } finally {
      await api.close();
    }
    await expect(requireRedis(loadConfig({ REDIS_URL: nodeUrl }))).rejects.toThrow(
      /^Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\) it is a node of a Redis Cluster: list the cluster in REDIS_CLUSTER_NODES instead$/,
    );
  });

  // Last: it leaves the cluster without a master for some slots.
  it('reports Redis down, in readiness and metrics, while slots have no master', async () => {
    const master = await cluster.masterOf(queuePrefix(namespace, MessageQueue.name));
    await cluster.kill(master);
    await eventually(async () => (await readiness(apis[0])).checks.redis === 'down', 20_000);
    const metrics = await (await fetch(`${apis[0].metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^petstore_dependency_up\{dependency="redis"\} 0$/m);
    // The worker cannot work without every queue's slot: not ready at all.
    expect((await fetch(`http://127.0.0.1:${worker.get(OpsServerService).port()}/health/ready`)).status).toBe(503);
    await expect(requireRedis(loadConfig({ REDIS_CLUSTER_NODES: cluster.seeds }))).rejects.toThrow(
      /REDIS_CLUSTER_NODES/,
    );
  }, 60_000);
});
