import { Client } from 'pg';
import { TcpProxy } from '../support/tcp-proxy';
import { countByStatus, maxMs, percentile, report, Sample, startLoad } from './support/load';
import { createAccount, ServiceProcess, stopAll } from './support/service-process';

const OUTAGE_MS = 10_000;
const databaseUrl = process.env.DATABASE_URL as string;
const redisUrl = process.env.REDIS_URL as string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ready(api: ServiceProcess): Promise<number> {
  return (await fetch(`${api.url}/health/ready`, { signal: AbortSignal.timeout(3_000) })).status;
}

function between(samples: Sample[], from: number, to: number): Sample[] {
  return samples.filter((s) => s.at >= from && s.at < to);
}

describe('faults: backing services go away under load', () => {
  let pg: TcpProxy;
  let redis: TcpProxy;
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let apiKey: string;
  let accountId: number;
  let db: Client;

  beforeAll(async () => {
    pg = await TcpProxy.inFrontOf(databaseUrl);
    redis = await TcpProxy.inFrontOf(redisUrl);
    const env = { DATABASE_URL: pg.url, REDIS_URL: redis.url };
    [api, worker] = await Promise.all([ServiceProcess.start('api', env), ServiceProcess.start('worker', env)]);
    ({ apiKey, accountId } = await createAccount(databaseUrl, 'faults backing services'));
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await stopAll([api, worker]);
    await Promise.all([pg?.stop(), redis?.stop(), db?.end()]);
  });

  it('Postgres down for 10 s: 503 service_unavailable with Retry-After, never a 500 or a hang, recovers alone', async () => {
    const server = api as ServiceProcess;
    const load = startLoad({
      url: server.url,
      apiKey,
      concurrency: 8,
      pauseMs: 10,
      next: (i) => [{ path: '/v1/account' }, { path: '/v1/keys' }, { path: '/v1/events?limit=5' }][i % 3],
    });
    await sleep(1_000);
    const downAt = load.elapsed();
    await pg.stop();
    await sleep(1_000);
    const readyDuringOutage = await ready(server);
    await sleep(OUTAGE_MS - 1_000);
    const upAt = load.elapsed();
    await pg.restart();
    const recovered = Date.now();
    const firstOk = await (async () => {
      for (;;) {
        const ok = load.samples.find((s) => s.at > upAt && s.status === 200);
        if (ok) return ok;
        if (Date.now() - recovered > 15_000) throw new Error('no 200 within 15 s of Postgres returning');
        await sleep(100);
      }
    })();
    await sleep(3_000);
    const samples = await load.stop();
    const readyAfter = await ready(server);

    const during = between(samples, downAt + 200, upAt);
    const after = samples.filter((s) => s.at > firstOk.at + 2_000);
    report('postgres down 10 s', {
      requests: samples.length,
      byStatus: countByStatus(samples),
      duringOutage: countByStatus(during),
      maxLatencyMs: maxMs(samples),
      p99Ms: percentile(samples, 99),
      recoveryMsAfterReturn: firstOk.at - upAt,
      readyDuringOutage,
      readyAfter,
    });

    // Every request got an answer: a 200 or a clean 503, within a few seconds.
    expect(samples.filter((s) => s.status !== 200 && s.status !== 503)).toEqual([]);
    expect(maxMs(samples)).toBeLessThan(3_000);
    const unavailable = samples.filter((s) => s.status === 503);
    expect(during.filter((s) => s.status === 503).length).toBeGreaterThan(during.length / 2);
    for (const s of unavailable) {
      expect(s.code).toBe('service_unavailable');
      expect(Number(s.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect(readyDuringOutage).toBe(503);
    // Recovery without a restart: the same process answers 200 again, to every request.
    expect(firstOk.at - upAt).toBeLessThan(10_000);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((s) => s.status === 200)).toBe(true);
    expect(readyAfter).toBe(200);
    expect(server.running).toBe(true);
  });

  it('Redis down for 10 s: the API keeps answering (fallback limiter, key cache) and stays ready, the outbox drains after', async () => {
    const server = api as ServiceProcess;
    const load = startLoad({
      url: server.url,
      apiKey,
      concurrency: 8,
      pauseMs: 10,
      next: (i) =>
        [
          { path: '/v1/account' },
          // Not /v1/rate_limit: its budget of its own (120 a minute per key) is far below this load.
          { path: '/v1/pets?limit=5' },
          { path: '/v1/keys' },
          // A creating write (not a key: the plan's key quota would refuse most of them).
          { method: 'POST', path: '/v1/categories', body: { name: `during-redis-fault-${i}` } },
        ][i % 4],
    });
    await sleep(1_000);
    const downAt = load.elapsed();
    await redis.stop();
    await sleep(2_000);
    const readyDuringOutage = await ready(server);
    const fallbackDuring = await server.metric('petstore_rate_limit_fallback_active');
    // Messages accepted now sit in the outbox (Postgres) until Redis is back.
    const messages: { status: number; id?: string }[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: `sent while Redis is down ${i}` }),
        signal: AbortSignal.timeout(3_000),
      });
      messages.push({ status: res.status, id: ((await res.json()) as { id?: string }).id });
    }
    await sleep(OUTAGE_MS - 2_000);
    const upAt = load.elapsed();
    await redis.restart();
    await sleep(3_000);
    const samples = await load.stop();

    // Readiness and the fallback gauge come back once the clients have reconnected.
    const readySince = Date.now();
    while ((await ready(server)) !== 200 && Date.now() - readySince < 15_000) await sleep(200);
    const readyAfter = await ready(server);
    const fallbackAfter = await server.metric('petstore_rate_limit_fallback_active');
    // Everything staged in the outbox while Redis was away reaches BullMQ once it is back.
    const outboxSince = Date.now();
    let outboxLeft = -1;
    while (Date.now() - outboxSince < 20_000) {
      outboxLeft = Number((await db.query('SELECT count(*)::int AS n FROM outbox')).rows[0].n);
      if (outboxLeft === 0) break;
      await sleep(250);
    }

    const processedSince = Date.now();
    let processed = 0;
    while (Date.now() - processedSince < 20_000) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(DISTINCT resource_id)::int AS n FROM events
          WHERE account_id = $1 AND type = 'message.processed' AND resource_id = ANY($2)`,
        [accountId, messages.map((m) => m.id)],
      );
      processed = rows[0].n;
      if (processed === messages.length) break;
      await sleep(250);
    }

    const during = between(samples, downAt, upAt);
    const created = during.filter((s) => s.status === 201).length;
    report('redis down 10 s', {
      requests: samples.length,
      byStatus: countByStatus(samples),
      duringOutage: countByStatus(during),
      createdDuringOutage: created,
      maxLatencyMs: maxMs(samples),
      p99Ms: percentile(samples, 99),
      readyDuringOutage,
      readyAfter,
      fallbackActiveDuring: fallbackDuring,
      fallbackActiveAfter: fallbackAfter,
      outboxRowsLeftAfter: outboxLeft,
      messagesAcceptedDuringOutage: messages.filter((m) => m.status === 202).length,
      messagesProcessedAfter: processed,
      readyWaitMs: Date.now() - readySince,
    });

    expect(samples.filter((s) => s.status !== 200 && s.status !== 201)).toEqual([]);
    expect(maxMs(samples)).toBeLessThan(3_000);
    expect(during.length).toBeGreaterThan(50);
    expect(created).toBeGreaterThan(0);
    expect(readyDuringOutage).toBe(200);
    expect(fallbackDuring).toBe(1);
    expect(readyAfter).toBe(200);
    expect(fallbackAfter).toBe(0);
    expect(outboxLeft).toBe(0);
    expect(messages.map((m) => m.status)).toEqual(messages.map(() => 202));
    expect(processed).toBe(messages.length);
    expect(server.running).toBe(true);
  });
});
