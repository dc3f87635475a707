import { TcpProxy } from '../support/tcp-proxy';
import { WebhookReceiver } from '@app/testing';
import { countByStatus, report, startLoad } from './support/load';
import { RawExchange, tryConnect } from './support/raw-http';
import { createAccount, ServiceProcess, stopAll } from './support/service-process';

const databaseUrl = process.env.DATABASE_URL as string;
const redisUrl = process.env.REDIS_URL as string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// How long before the signal, on the client's clock, a request may start and still arrive after it.
const KEEP_ALIVE_RACE_MS = 100;

/** A POST /v1/keys whose body arrives in two halves, so the test decides when it ends. */
async function halfSentRequest(api: ServiceProcess, apiKey: string): Promise<{ exchange: RawExchange; rest: string }> {
  const body = JSON.stringify({ name: 'sent during shutdown', scopes: ['read'] });
  const exchange = await new RawExchange(api.port).connected();
  exchange.write(
    `POST /v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  return { exchange, rest: body.slice(10) };
}

describe('faults: SIGTERM', () => {
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let apiKey: string;

  beforeAll(async () => {
    ({ apiKey } = await createAccount(databaseUrl, 'faults shutdown'));
  });
  afterEach(() => stopAll([api, worker]));

  it('under load: stops accepting at once, finishes what is in flight, exits 0 within SHUTDOWN_GRACE_MS', async () => {
    const graceMs = 5_000;
    api = await ServiceProcess.start('api', { SHUTDOWN_GRACE_MS: String(graceMs) });
    const load = startLoad({
      url: api.url,
      apiKey,
      concurrency: 10,
      pauseMs: 5,
      next: () => ({ path: '/v1/account' }),
    });
    await sleep(1_000);
    const { exchange, rest } = await halfSentRequest(api, apiKey);
    await sleep(200);

    const sigAt = load.elapsed();
    const exited = api.signal('SIGTERM');
    await sleep(300);
    const newConnection = await tryConnect(api.port);
    const stillRunningWhileInFlight = api.running;
    // The in-flight request completes after the listener has closed.
    exchange.write(rest);
    const { response } = await exchange.closed;
    const exit = await exited;
    const samples = await load.stop();

    const before = samples.filter((s) => s.at < sigAt);
    const after = samples.filter((s) => s.at >= sigAt);
    report('SIGTERM under load', {
      requestsBeforeSignal: before.length,
      beforeSignal: countByStatus(before),
      afterSignal: countByStatus(after),
      newConnectionAfter300ms: newConnection,
      inFlightRequestStatus: exchange.status,
      exit,
    });

    expect(newConnection).toBe('ECONNREFUSED');
    expect(stillRunningWhileInFlight).toBe(true);
    expect(response).toMatch(/^HTTP\/1\.1 201 /);
    expect(response).toMatch(/\r\nConnection: close\r\n/i);
    // Requests sent before the signal were all answered, except one that reached an idle keep-alive socket as the
    // server closed it: the client's clock cannot tell it from one sent after (docs/reliability.md, "Shutdown").
    expect(before.length).toBeGreaterThan(50);
    const unanswered = before.filter((s) => s.status !== 200);
    expect(unanswered.map((s) => ({ status: s.status, raced: s.at >= sigAt - KEEP_ALIVE_RACE_MS }))).toEqual(
      unanswered.map(() => ({ status: 'ECONNRESET', raced: true })),
    );
    // After it: answered, or refused at connect; never a 5xx or a hang.
    for (const s of after) expect([200, 'ECONNREFUSED', 'UND_ERR_SOCKET', 'ECONNRESET']).toContain(s.status);
    expect(exit).toEqual(expect.objectContaining({ code: 0, signal: null }));
    expect(exit.ms).toBeLessThan(graceMs);
  });

  it('a request that never completes is cut at SHUTDOWN_GRACE_MS and the process still exits 0', async () => {
    const graceMs = 2_000;
    api = await ServiceProcess.start('api', { SHUTDOWN_GRACE_MS: String(graceMs) });
    const { exchange } = await halfSentRequest(api, apiKey);
    await sleep(200);
    const exit = await api.signal('SIGTERM');
    await exchange.closed;
    report('SIGTERM with a stuck request', { graceMs, exit });
    expect(exit.code).toBe(0);
    expect(exit.ms).toBeGreaterThanOrEqual(graceMs - 100);
    expect(exit.ms).toBeLessThan(graceMs + 1_500);
  });

  it('the worker stops on SIGTERM too: BullMQ workers closed, then exit 0', async () => {
    worker = await ServiceProcess.start('worker');
    const exit = await worker.signal('SIGTERM');
    report('worker SIGTERM', { exit });
    expect(exit.code).toBe(0);
    expect(exit.ms).toBeLessThan(10_000);
  });
});

describe('faults: SIGTERM whatever state the dependencies are in', () => {
  const graceMs = 3_000;
  // SHUTDOWN_GRACE_MS for in-flight work, then at most 2 s to close clients; 500 ms for the
  // exit to reach this process.
  const deadlineMs = graceMs + 2_500;
  let pg: TcpProxy;
  let redis: TcpProxy;
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let receiver: WebhookReceiver | undefined;

  beforeEach(async () => {
    pg = await TcpProxy.inFrontOf(databaseUrl);
    redis = await TcpProxy.inFrontOf(redisUrl);
  });
  afterEach(async () => {
    await stopAll([api, worker]);
    await Promise.all([pg.stop(), redis.stop(), receiver?.close()]);
    api = worker = receiver = undefined;
  });

  const start = (app: 'api' | 'worker') =>
    ServiceProcess.start(app, {
      SHUTDOWN_GRACE_MS: String(graceMs),
      DATABASE_URL: pg.url,
      REDIS_URL: redis.url,
      ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
      // A job left running at shutdown is found stalled within about twice this.
      JOB_LOCK_MS: '2000',
    });

  for (const app of ['worker', 'api'] as const) {
    for (const [dependency, proxy] of [
      ['Redis', () => redis],
      ['Postgres', () => pg],
    ] as const) {
      it(`the ${app} with ${dependency} gone exits within SHUTDOWN_GRACE_MS + 2 s`, async () => {
        const server = await start(app);
        if (app === 'api') api = server;
        else worker = server;
        await proxy().stop();
        // Long enough for reconnect attempts, lock renewals and relay polls to fail.
        await sleep(2_000);
        const exit = await server.signal('SIGTERM');
        report(`${app} SIGTERM with ${dependency} gone`, { graceMs, exit });
        expect(exit.ms).toBeLessThan(deadlineMs);
      });
    }
  }

  it('the worker with a webhook delivery in flight to a receiver that never answers exits within SHUTDOWN_GRACE_MS + 2 s; the next worker delivers it', async () => {
    receiver = await new WebhookReceiver().start();
    receiver.replyDelayMs = 120_000;
    [api, worker] = await Promise.all([start('api'), start('worker')]);
    const { apiKey } = await createAccount(databaseUrl, 'faults shutdown in flight');
    const call = async (path: string, body?: unknown) => {
      const res = await fetch(`${(api as ServiceProcess).url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });
      expect(res.status).toBeLessThan(300);
      return (await res.json()) as { id: number };
    };
    const webhook = await call('/v1/webhooks', { url: receiver.url, events: ['pet.created'] });
    await call(`/v1/webhooks/${webhook.id}/test`);
    const deadline = Date.now() + 15_000;
    while (receiver.requests.length === 0 && Date.now() < deadline) await sleep(100);
    expect(receiver.requests).toHaveLength(1);

    const exit = await worker.signal('SIGTERM');
    expect(exit.ms).toBeLessThan(deadlineMs);

    // The delivery was not lost: a worker started afterwards sends it again.
    receiver.replyDelayMs = 0;
    const restartedAt = Date.now();
    worker = await start('worker');
    // Usually within 2 x JOB_LOCK_MS. But BullMQ runs one stalled-job check per queue per period
    // for all workers of a Redis (a key with that period as its expiry), and an earlier test's
    // worker here had the default 30 s period: its check can hold this one back that long
    // (in CI the job ran again after 24 s).
    while (receiver.requests.length < 2 && Date.now() - restartedAt < 40_000) await sleep(100);
    report('worker SIGTERM with a delivery in flight', { graceMs, exit, resentAfterMs: Date.now() - restartedAt });
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1].body).toBe(receiver.requests[0].body);
  });
});
