import { Client } from 'pg';
import { PetstoreClient } from '@petstore/client';
import { describeWith } from '../support/external-binary';
import { PgAutoFailover } from '../support/pg-auto-failover';
import { countByStatus, maxMs, percentile, report, Sample, startLoad } from './support/load';
import { createAccount, runToExit, ServiceProcess, stopAll } from './support/service-process';

/** The bound stated in docs/reliability.md: from the SIGKILL to the first 202 on the promoted standby. */
const RTO_BOUND_MS = 15_000;
const STATEMENT_TIMEOUT_MS = 5_000;
/** A request not answered by then hung: past the statement timeout, and past the pool's connect timeout. */
const REQUEST_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWith('pg_autoctl', 'apt-get install -y postgresql-15-auto-failover')(
  'faults: the Postgres primary fails over',
  () => {
    let formation: PgAutoFailover;
    let api: ServiceProcess | undefined;
    let worker: ServiceProcess | undefined;
    let apiKey: string;
    let accountId: number;

    /** Reads and POST /v1/messages, half and half, at a few hundred a second on this machine. */
    const mixedLoad = (url: string) =>
      startLoad({
        url,
        apiKey,
        concurrency: 12,
        pauseMs: 5,
        timeoutMs: REQUEST_TIMEOUT_MS,
        next: (i) =>
          [
            { method: 'POST', path: '/v1/messages', body: { message: `failover ${i}` } },
            { path: '/v1/account' },
            { method: 'POST', path: '/v1/messages', body: { message: `failover ${i}` } },
            { path: '/v1/events?limit=5' },
          ][i % 4],
      });

    /** How many message.processed events, and messages rows marked processed, each acknowledged id has. */
    async function outcome(
      ids: string[],
      waitMs = 60_000,
    ): Promise<{ lost: string[]; duplicated: string[]; rows: number }> {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const db = new Client({ connectionString: formation.urlOf(await formation.waitForPrimary()) });
        await db.connect();
        try {
          const { rows: events } = await db.query<{ id: string; n: number }>(
            `SELECT resource_id AS id, count(*)::int AS n FROM events
            WHERE account_id = $1 AND type = 'message.processed' AND resource_id = ANY($2) GROUP BY 1`,
            [accountId, ids],
          );
          const { rows: stored } = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND id = ANY($2) AND status = 'processed'`,
            [accountId, ids],
          );
          const seen = new Map(events.map((e) => [e.id, e.n]));
          const lost = ids.filter((id) => !seen.has(id));
          if ((lost.length === 0 && stored[0].n === ids.length) || Date.now() > deadline) {
            await sleep(1_000); // a late duplicate would show up here
            const { rows: again } = await db.query<{ id: string; n: number }>(
              `SELECT resource_id AS id, count(*)::int AS n FROM events
              WHERE account_id = $1 AND type = 'message.processed' AND resource_id = ANY($2) GROUP BY 1 HAVING count(*) > 1`,
              [accountId, ids],
            );
            return { lost, duplicated: again.map((r) => r.id), rows: stored[0].n };
          }
        } finally {
          await db.end();
        }
        await sleep(500);
      }
    }

    const accepted = (samples: Sample[]) =>
      samples.filter((s) => s.status === 202 && s.id !== undefined).map((s) => s.id!);
    const unexpected = (samples: Sample[]) => samples.filter((s) => ![200, 202, 503].includes(s.status as number));

    beforeAll(async () => {
      formation = await PgAutoFailover.start();
      // The migrate step, the CLI and both apps all take the formation's URL: both hosts, read-write wanted.
      const migrated = await runToExit('cli', { DATABASE_URL: formation.url }, ['migrate'], 60_000);
      if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
      ({ apiKey, accountId } = await createAccount(formation.url, 'faults postgres failover'));
      const env = {
        DATABASE_URL: formation.url,
        DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        // The jobs failing while there is no primary are retried until there is one again.
        JOB_ATTEMPTS: '20',
        JOB_BACKOFF_MS: '500',
      };
      [api, worker] = await Promise.all([ServiceProcess.start('api', env), ServiceProcess.start('worker', env)]);
    }, 120_000);

    afterAll(async () => {
      await stopAll([api, worker]);
      await formation?.stop();
    });

    it(`SIGKILL of the primary under load: the standby promoted and writing within ${RTO_BOUND_MS / 1000} s, only 503s with Retry-After meanwhile, every 202 processed once`, async () => {
      const server = api as ServiceProcess;
      const load = mixedLoad(server.url);
      await sleep(3_000);
      const killedAt = load.elapsed();
      const dead = await formation.killPrimary();
      let readyDuringGap = 0;
      const readiness = (async () => {
        // Readiness while there is no primary: polled until the first 503 (or the primary is back).
        for (let i = 0; i < 40 && readyDuringGap !== 503; i++) {
          readyDuringGap = (await fetch(`${server.url}/health/ready`, { signal: AbortSignal.timeout(3_000) })).status;
          await sleep(100);
        }
      })();
      const promoted = await formation.waitForPrimary(RTO_BOUND_MS * 2, dead);
      const promotedAt = load.elapsed();
      const firstWrite = await (async () => {
        for (;;) {
          const s = load.samples.find((x) => x.at > promotedAt && x.status === 202);
          if (s) return s;
          if (load.elapsed() - promotedAt > RTO_BOUND_MS) throw new Error('no 202 after the promotion');
          await sleep(100);
        }
      })();
      await readiness;
      await sleep(3_000);
      const samples = await load.stop();
      const readyAfter = (await fetch(`${server.url}/health/ready`)).status;
      const ids = accepted(samples);
      const { lost, duplicated, rows } = await outcome(ids);

      const gap = samples.filter((s) => s.at >= killedAt && s.at < firstWrite.at);
      const figures = {
        requests: samples.length,
        perSecond: Math.round(samples.length / (load.elapsed() / 1000)),
        byStatus: countByStatus(samples),
        duringGap: countByStatus(gap),
        promotedMs: promotedAt - killedAt,
        rtoMs: firstWrite.at + firstWrite.ms - killedAt,
        maxLatencyMs: maxMs(samples),
        p99Ms: percentile(samples, 99),
        readyDuringGap,
        readyAfter,
        acknowledged: ids.length,
        acknowledgedBeforeKill: samples.filter((s) => s.id && s.at + s.ms < killedAt).length,
        processedRows: rows,
        lost: lost.length,
        duplicated: duplicated.length,
        newPrimary: promoted,
      };
      report('postgres primary SIGKILL (pg_auto_failover)', figures);

      expect(unexpected(samples)).toEqual([]);
      for (const s of samples.filter((x) => x.status === 503)) {
        expect(s.code).toBe('service_unavailable');
        expect(Number(s.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      expect(maxMs(samples)).toBeLessThan(REQUEST_TIMEOUT_MS);
      expect(figures.rtoMs).toBeLessThan(RTO_BOUND_MS);
      expect(readyDuringGap).toBe(503);
      expect(readyAfter).toBe(200);
      expect(figures.acknowledgedBeforeKill).toBeGreaterThan(100);
      expect(lost).toEqual([]);
      expect(duplicated).toEqual([]);
      expect(rows).toBe(ids.length);
      expect(server.running && (worker as ServiceProcess).running).toBe(true);
    });

    it('a planned switchover under load: nothing acknowledged lost, every failed request a 503 the SDK retries into a success', async () => {
      const server = api as ServiceProcess;
      // The killed node back as the synchronous standby (pg_rewind by pg_autoctl).
      const down = formation.nodes.map((n) => n.port);
      const before = await formation.waitForPrimary();
      for (const port of down.filter((p) => p !== before)) await formation.rejoin(port);

      const load = mixedLoad(server.url);
      const sdk = new PetstoreClient({ baseUrl: server.url, apiKey, maxRetries: 6, maxRetryDelayMs: 10_000 });
      const sdkIds: string[] = [];
      const sdkFailures: string[] = [];
      let sdkRunning = true;
      const sdkWorkers = Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; sdkRunning; i++) {
          try {
            const r = await sdk.request<{ id: string }>('POST', '/v1/messages', { body: { message: `sdk ${w}-${i}` } });
            sdkIds.push(r.data.id);
          } catch (err) {
            sdkFailures.push(String((err as Error).message));
          }
          await sleep(20);
        }
      });
      await sleep(2_000);
      const switchedAt = load.elapsed();
      await formation.switchover();
      const switchedMs = load.elapsed() - switchedAt;
      const after = await formation.waitForPrimary();
      await sleep(3_000);
      sdkRunning = false;
      await Promise.all(sdkWorkers);
      const samples = await load.stop();
      const ids = [...accepted(samples), ...sdkIds];
      const { lost, duplicated, rows } = await outcome(ids);

      const figures = {
        requests: samples.length,
        byStatus: countByStatus(samples),
        switchoverMs: switchedMs,
        primary: { before, after },
        maxLatencyMs: maxMs(samples),
        sdkCalls: sdkIds.length + sdkFailures.length,
        sdkFailures: sdkFailures.length,
        acknowledged: ids.length,
        processedRows: rows,
        lost: lost.length,
        duplicated: duplicated.length,
      };
      report('postgres planned switchover (pg_autoctl perform switchover)', figures);

      expect(after).not.toBe(before);
      expect(unexpected(samples)).toEqual([]);
      for (const s of samples.filter((x) => x.status === 503)) {
        expect(s.code).toBe('service_unavailable');
        expect(Number(s.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      expect(maxMs(samples)).toBeLessThan(REQUEST_TIMEOUT_MS);
      expect(sdkFailures).toEqual([]);
      expect(sdkIds.length).toBeGreaterThan(0);
      expect(lost).toEqual([]);
      expect(duplicated).toEqual([]);
      expect(rows).toBe(ids.length);
    });
  },
);
