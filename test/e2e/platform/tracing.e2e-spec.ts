import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { loadConfig } from '@app/config';
import { queuePrefix } from '@app/jobs';
import { FulfilmentQueue, FulfilOrderJob } from '@app/store';
import { createAccount, ServiceProcess, stopAll } from '../../faults/support/service-process';
import { eventually, HttpClient } from '../../support/http';
import { OtlpReceiver, ReceivedSpan } from '../../support/otlp-receiver';
import { ReceivedRequest, WebhookReceiver } from '@app/testing';

/** OTLP span kinds. */
const { redisNamespace: namespace } = loadConfig();
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/**
 * Tracing across the queue, with the built processes (tracing starts in main, before the app):
 * the API and the worker export to a local OTLP/HTTP receiver, and a request's trace must run
 * through its job, the event's fan-out and the webhook delivery, whose POST carries it on.
 */
describe('tracing (OTLP) from the request to the webhook delivery', () => {
  let otlp: OtlpReceiver;
  let hooks: WebhookReceiver;
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let http: HttpClient;

  beforeAll(async () => {
    otlp = await new OtlpReceiver().start();
    hooks = await new WebhookReceiver().start();
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e,petstore.team=pets%20%26%20co',
      ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    };
    [api, worker] = await Promise.all([
      ServiceProcess.start('api', env),
      ServiceProcess.start('worker', { ...env, SWEEP_INTERVAL_MS: '400' }),
    ]);
    const { apiKey } = await createAccount(process.env.DATABASE_URL as string, 'tracing');
    http = new HttpClient(api.url, apiKey);
    const events = ['message.processed', 'order.placed', 'order.completed'];
    expect((await http.post('/v1/webhooks', { url: hooks.url, events })).status).toBe(201);
  });
  afterAll(async () => {
    await stopAll([api, worker]);
    await Promise.all([otlp?.close(), hooks?.close()]);
  });

  /** The first delivery of an event of `type` (about resource `resourceId` if given). */
  const delivery = (type: string, resourceId?: number) =>
    eventually(
      async () =>
        hooks.requests.find(
          (r) =>
            r.headers['petstore-event-type'] === type &&
            (resourceId === undefined || JSON.parse(r.body).resourceId === String(resourceId)),
        ),
      20_000,
    );
  const traceIdOf = (r: ReceivedRequest) => TRACEPARENT.exec(String(r.headers.traceparent))?.[1];

  async function newPet(): Promise<number> {
    const categoryId = (await http.post('/v1/categories', { name: `traced ${Math.random()}` })).body.id;
    const petId = (await http.post('/v1/pets', { name: 'traced pet', categoryId })).body.id;
    expect((await http.put(`/v1/store/inventory/${petId}`, { quantity: 1 })).status).toBe(200);
    return petId;
  }

  /**
   * The trace the delivery's traceparent header names, once the spans `names` have all arrived (as
   * often as listed) and so has every parent they name: a parent ends, and is exported, after its children.
   */
  async function traceOf(received: ReceivedRequest, names: string[]): Promise<ReceivedSpan[]> {
    const [, traceId] = TRACEPARENT.exec(String(received.headers.traceparent)) ?? [];
    expect(traceId).toBeDefined();
    return eventually(async () => {
      const spans = otlp.trace(traceId);
      const count = (list: string[], name: string) => list.filter((n) => n === name).length;
      const arrived = spans.map((s) => s.name);
      const ids = new Set(spans.map((s) => s.spanId));
      const parentsIn = spans.every((s) => !s.parentSpanId || ids.has(s.parentSpanId));
      return parentsIn && names.every((n) => count(arrived, n) >= count(names, n)) ? spans : undefined;
    });
  }

  /** One tree: a single root (the server span) and every other span's parent in the trace. */
  function expectOneTree(spans: ReceivedSpan[], rootName: string): void {
    const ids = new Set(spans.map((s) => s.spanId));
    const roots = spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
    expect(roots.map((s) => [s.name, s.kind, s.service])).toEqual([[rootName, SERVER, 'petstore-api']]);
  }

  /** The delivery's traceparent names the client span of that delivery. */
  function expectSentBy(received: ReceivedRequest, spans: ReceivedSpan[]): void {
    const [, , parentId] = TRACEPARENT.exec(String(received.headers.traceparent)) ?? [];
    const sender = spans.find((s) => s.spanId === parentId);
    expect(sender).toMatchObject({ name: 'webhook delivery', kind: CLIENT, service: 'petstore-worker' });
  }

  it('every span carries service.version (the package version) and OTEL_RESOURCE_ATTRIBUTES, percent-decoded', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect((await http.post('/v1/messages', { message: 'resource' })).status).toBe(202);
    const spans = await eventually(async () => {
      const services = new Set(otlp.spans.map((s) => s.service));
      return services.has('petstore-api') && services.has('petstore-worker') ? otlp.spans : undefined;
    });
    for (const service of ['petstore-api', 'petstore-worker'])
      expect(spans.find((s) => s.service === service)?.resource).toMatchObject({
        'service.name': service,
        'service.version': version,
        'deployment.environment.name': 'e2e',
        'petstore.team': 'pets & co',
      });
  });

  it('at start-up, each process logs one line saying where its spans go', () => {
    for (const proc of [api!, worker!]) {
      const lines = readFileSync(proc.logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => String(l.msg).startsWith('tracing'));
      expect(lines).toEqual([
        expect.objectContaining({
          msg: `tracing: spans go to ${otlp.url}/v1/traces`,
          service: `petstore-${proc.app}`,
          sampler: 'parentbased_always_on',
        }),
      ]);
    }
  });

  it("a request's log lines carry its trace_id and its server span's span_id; start-up lines carry none", async () => {
    const traceId = randomBytes(16).toString('hex');
    const requestId = `traced-${Date.now()}`;
    const res = await http.get('/v1/pets/987654321', {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'X-Request-Id': requestId },
    });
    expect(res.status).toBe(404);
    const server = await eventually(async () => otlp.trace(traceId).find((s) => s.kind === SERVER), 10_000);
    const lines = () =>
      readFileSync(api!.logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = await eventually(async () => lines().find((l) => l.reqId === requestId), 10_000);
    expect(line).toMatchObject({ msg: 'request completed', trace_id: traceId, span_id: server.spanId });
    expect(lines().find((l) => l.msg === 'Nest application successfully started')).not.toHaveProperty('trace_id');
  });

  it('POST /v1/messages: request, message job, fan-out and the message.processed delivery are one trace', async () => {
    expect((await http.post('/v1/messages', { message: 'trace me' })).status).toBe(202);
    const received = await delivery('message.processed');
    const spans = await traceOf(received, [
      'POST /v1/messages',
      'outbox write',
      'messages message.process',
      'events event.fan-out-pending',
      'webhooks webhook.deliver',
      'webhook delivery',
    ]);
    expectOneTree(spans, 'POST /v1/messages');
    expectSentBy(received, spans);
    expect(spans.find((s) => s.name === 'messages message.process')).toMatchObject({
      kind: CONSUMER,
      service: 'petstore-worker',
      attributes: { 'messaging.destination.name': 'messages', 'messaging.operation.name': 'message.process' },
    });
  });

  it('POST /v1/store/orders: request, fulfilment and both order events’ deliveries are one trace', async () => {
    const order = await http.post('/v1/store/orders', { petId: await newPet(), quantity: 1 });
    expect(order.status).toBe(201);

    const [placed, completed] = await Promise.all([
      delivery('order.placed', order.body.id),
      delivery('order.completed', order.body.id),
    ]);
    const spans = await traceOf(completed, [
      'POST /v1/store/orders',
      'fulfilment order.fulfil',
      // One fan-out job, or two: a second event of the account enqueued while the first's job waits joins it.
      'events event.fan-out-pending',
      'webhook delivery',
      'webhook delivery',
    ]);
    expect(traceIdOf(placed)).toBe(spans[0].traceId);
    expectOneTree(spans, 'POST /v1/store/orders');
    expectSentBy(completed, spans);
    expectSentBy(placed, spans);
  });

  it('a fulfilment job lost from Redis and given back by the sweep continues its order’s trace', async () => {
    const shipDate = new Date(Date.now() + 1_000).toISOString();
    const order = await http.post('/v1/store/orders', { petId: await newPet(), shipDate });
    expect(order.status).toBe(201);
    const queue = new Queue(FulfilmentQueue.name, {
      prefix: queuePrefix(namespace, FulfilmentQueue.name),
      connection: { url: process.env.REDIS_URL },
    });
    try {
      expect(await queue.remove(FulfilOrderJob.jobId({ accountId: 0, orderId: order.body.id }))).toBe(1); // lost, as if Redis had been flushed
    } finally {
      await queue.close();
    }
    const [placed, completed] = await Promise.all([
      delivery('order.placed', order.body.id),
      delivery('order.completed', order.body.id),
    ]);
    expect(traceIdOf(completed)).toBe(traceIdOf(placed));
    const spans = await traceOf(completed, ['POST /v1/store/orders', 'fulfilment order.fulfil']);
    expectOneTree(spans, 'POST /v1/store/orders');
  });
});

/** OTEL_TRACES_SAMPLER, with the built API: parentbased_always_off records only what a caller's sampled trace continues. */
describe('tracing: OTEL_TRACES_SAMPLER', () => {
  let otlp: OtlpReceiver;
  let api: ServiceProcess | undefined;

  beforeAll(async () => {
    otlp = await new OtlpReceiver().start();
    api = await ServiceProcess.start('api', {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_TRACES_SAMPLER: 'parentbased_always_off',
    });
  });
  afterAll(async () => {
    await stopAll([api]);
    await otlp?.close();
  });

  it('parentbased_always_off: a request starting a trace is not recorded, one continuing a sampled trace is', async () => {
    const anon = new HttpClient(api!.url);
    expect((await anon.get('/health/live')).status).toBe(200);
    const traceId = randomBytes(16).toString('hex');
    const res = await anon.get('/health/live', { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(res.status).toBe(200);
    await eventually(async () => otlp.trace(traceId).length > 0, 10_000);
    // Exported in order: the first request's span, had it been recorded, would have come by now.
    expect(otlp.spans.filter((s) => s.traceId !== traceId)).toEqual([]);
  });
});
