import { countByStatus, report, startLoad } from './support/load';
import { RawExchange, tryConnect } from './support/raw-http';
import { createAccount, ServiceProcess, stopAll } from './support/service-process';

const databaseUrl = process.env.DATABASE_URL as string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    // Requests sent before the signal were all answered.
    expect(before.length).toBeGreaterThan(50);
    expect(before.every((s) => s.status === 200)).toBe(true);
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

  it('the worker stops on SIGTERM too: BullMQ workers closed, then Nest re-raises the signal', async () => {
    worker = await ServiceProcess.start('worker');
    const exit = await worker.signal('SIGTERM');
    report('worker SIGTERM', { exit });
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    expect(exit.ms).toBeLessThan(10_000);
  });
});
