import { INestApplicationContext } from '@nestjs/common';
import { expectErrorBody } from '../../support/expect-error';
import { eventually, HttpClient } from '../../support/http';
import { TcpProxy } from '../../support/tcp-proxy';
import { queueClientsReady, RunningApi, startApi, startWorker, workerOpsUrl } from '../../support/test-apps';

const databaseUrl = process.env.DATABASE_URL as string;
const redisUrl = process.env.REDIS_URL as string;

/** petstore_dependency_up{dependency} as scraped from `url`/metrics. */
async function dependencyUp(url: string, dependency: 'postgres' | 'redis'): Promise<string | undefined> {
  const text = (await new HttpClient(url).get('/metrics')).text;
  return new RegExp(`^petstore_dependency_up\\{dependency="${dependency}"\\} (\\d)$`, 'm').exec(text)?.[1];
}

describe('health: readiness says what each app can do without', () => {
  let pg: TcpProxy;
  let redis: TcpProxy;
  const cut = new Set<TcpProxy>();
  /** The outage; the app is closed with its dependencies back (closing without them is the shutdown suite's). */
  const stop = (...proxies: TcpProxy[]) => Promise.all(proxies.map((p) => (cut.add(p), p.stop())));
  const restore = () => Promise.all([...cut].map((p) => (cut.delete(p), p.restart())));
  /** How long a state may take to show: generous, since CI machines run slow and what counts is that it comes. */
  const SETTLE_MS = 20_000;

  beforeEach(async () => {
    [pg, redis] = await Promise.all([TcpProxy.inFrontOf(databaseUrl), TcpProxy.inFrontOf(redisUrl)]);
  });
  afterEach(async () => {
    await Promise.all([pg.stop(), redis.stop()]);
  });

  describe('api', () => {
    let api: RunningApi;
    let anon: HttpClient;

    beforeEach(async () => {
      api = await startApi({ DATABASE_URL: pg.url, REDIS_URL: redis.url });
      anon = new HttpClient(api.url);
      // Just started: its clients may still be connecting through the proxies.
      await eventually(async () => (await anon.get('/health/ready')).body?.status === 'ok', SETTLE_MS);
    });
    afterEach(async () => {
      await restore();
      await api.close();
    });

    it('with Redis cut stays ready (200) and says degraded, redis down', async () => {
      await stop(redis);
      const res = await eventually(async () => {
        const r = await anon.get('/health/ready');
        return r.body?.status === 'degraded' ? r : null;
      }, SETTLE_MS);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'degraded', checks: { postgres: 'up', redis: 'down' } });
    });

    /** Probes are answered from a check at most 1 s old: a change shows within that plus the probe timeout. */
    const nextReady = (status: number) =>
      eventually(async () => {
        const r = await anon.get('/health/ready');
        return r.status === status ? r : null;
      }, SETTLE_MS);

    it('with Postgres cut is not ready: 503 service_unavailable naming postgres, within 1 s and the probe timeout', async () => {
      await stop(pg);
      const started = Date.now();
      const res = await nextReady(503);
      expect(Date.now() - started).toBeLessThan(3_000);
      expectErrorBody(res, 503, 'service_unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body.details).toEqual([{ field: 'postgres', message: 'unreachable' }]);
      // The kubelet's probes, on the metrics port, get the same answer.
      const ops = await new HttpClient(api.metricsUrl).get('/health/ready');
      expect(ops.status).toBe(503);
      expect(ops.headers.get('retry-after')).toBe('5');
      expect(ops.body).toMatchObject({ code: 'service_unavailable', details: res.body.details });
    });

    it('is ready again by itself when the dependency returns', async () => {
      await stop(pg);
      await nextReady(503);
      await restore();
      await eventually(async () => (await anon.get('/health/ready')).status === 200, SETTLE_MS);
    });

    it('keeps liveness at 200 whatever its dependencies', async () => {
      await stop(pg, redis);
      const res = await anon.get('/health/live');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('exports petstore_dependency_up per dependency, measured at scrape', async () => {
      expect(await dependencyUp(api.metricsUrl, 'postgres')).toBe('1');
      expect(await dependencyUp(api.metricsUrl, 'redis')).toBe('1');
      await stop(redis);
      await eventually(async () => (await dependencyUp(api.metricsUrl, 'redis')) === '0', SETTLE_MS);
      expect(await dependencyUp(api.metricsUrl, 'postgres')).toBe('1');
    });
  });

  describe('worker', () => {
    let worker: INestApplicationContext;
    let ops: HttpClient;
    let opsUrl: string;

    beforeEach(async () => {
      worker = await startWorker({ DATABASE_URL: pg.url, REDIS_URL: redis.url });
      opsUrl = workerOpsUrl(worker);
      ops = new HttpClient(opsUrl);
      await eventually(async () => (await ops.get('/health/ready')).status === 200, SETTLE_MS);
    });

    afterEach(async () => {
      await restore();
      await eventually(async () => (await ops.get('/health/ready')).status === 200, SETTLE_MS);
      // Readiness asks another client, which can be back first; a worker closed while its queue clients
      // were still reconnecting once left a "Connection is closed." rejection that failed the next test (CI, 2026-11-25).
      await eventually(() => queueClientsReady(worker), SETTLE_MS);
      await worker.close();
    });

    it('with Redis cut is not ready (it does no work without it): 503 naming redis', async () => {
      await stop(redis);
      const res = await eventually(async () => {
        const r = await ops.get('/health/ready');
        return r.status === 503 ? r : null;
      }, SETTLE_MS);
      expect(res.body).toMatchObject({
        code: 'service_unavailable',
        details: [{ field: 'redis', message: 'unreachable' }],
      });
      expect(await dependencyUp(opsUrl, 'redis')).toBe('0');
    });

    it('with Postgres cut is not ready: 503 naming postgres', async () => {
      await stop(pg);
      const res = await ops.get('/health/ready');
      expect(res.status).toBe(503);
      expect(res.body.details).toEqual([{ field: 'postgres', message: 'unreachable' }]);
    });

    it('keeps liveness at 200 whatever its dependencies', async () => {
      await stop(pg, redis);
      expect((await ops.get('/health/live')).status).toBe(200);
    });
  });
});
