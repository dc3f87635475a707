import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { TcpProxy } from '../support/tcp-proxy';
import { countByStatus, report, startLoad } from './support/load';
import { createAccount, ServiceProcess, stopAll } from './support/service-process';

const databaseUrl = process.env.DATABASE_URL as string;
const redisUrl = process.env.REDIS_URL as string;
const MB = 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The process's log file as parsed JSON lines. */
type LogLine = { level: number; context?: string; msg?: string; count?: number };

function logLines(api: ServiceProcess): LogLine[] {
  return readFileSync(api.logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine);
}

/** Jobs the fast path left to the relay, by the log (a line may stand for a unit's several). */
function deferredJobs(lines: LogLine[]): number {
  return lines.filter((l) => l.msg === 'outbox dispatch deferred to relay').reduce((n, l) => n + (l.count ?? 0), 0);
}

/**
 * The smallest old generation seen over `ms`: its size right after a full collection, i.e.
 * what the process keeps (a log buffer would live there), not garbage waiting to be collected.
 */
async function keptHeap(api: ServiceProcess, ms: number): Promise<number> {
  let min = Infinity;
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
    min = Math.min(min, await api.metric('nodejs_heap_space_size_used_bytes', { space: 'old' }));
  }
  return min;
}

describe('faults: the built API writes its log lines and keeps none', () => {
  let redis: TcpProxy;
  let api: ServiceProcess | undefined;
  let apiKey: string;
  let accountId: number;

  beforeAll(async () => {
    redis = await TcpProxy.inFrontOf(redisUrl);
    // A small old generation (~30 MB live) makes V8 collect it every second or so under load,
    // instead of letting it grow to 2.5x the live set first (main.ts).
    api = await ServiceProcess.start('api', { REDIS_URL: redis.url, NODE_OPTIONS: '--max-old-space-size=80' });
    ({ apiKey, accountId } = await createAccount(databaseUrl, 'faults api logs'));
  });

  afterAll(async () => {
    await stopAll([api]);
    await redis?.stop();
  });

  it("logs Nest's start-up lines from the process", () => {
    const lines = logLines(api as ServiceProcess);
    expect(lines.some((l) => l.context === 'NestApplication' || l.context === 'InstanceLoader')).toBe(true);
  });

  describe('with Redis away, under load', () => {
    let accepted = 0;
    let early = 0;
    let late = 0;
    let lines: LogLine[] = [];
    let staged = { jobs: 0, messages: 0 };

    beforeAll(async () => {
      const server = api as ServiceProcess;
      await redis.stop();
      // Every message accepted now logs that its job waits for the relay: lines a buffer would keep.
      const load = startLoad({
        url: server.url,
        apiKey,
        concurrency: 8,
        next: (i) => ({ method: 'POST', path: '/v1/messages', body: { message: `redis away ${i}` } }),
      });
      await sleep(1_000);
      early = await keptHeap(server, 3_000);
      await sleep(1_000);
      late = await keptHeap(server, 3_000);
      const samples = await load.stop();
      accepted = samples.filter((s) => s.status === 202).length;
      await sleep(300); // pino writes asynchronously
      lines = logLines(server);
      // The account's message jobs waiting in the outbox for the relay (Redis is still away), and their messages.
      const db = new Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        [staged] = (
          await db.query(
            `SELECT count(*)::int AS jobs, coalesce(sum(jsonb_array_length(payload->'messages')), 0)::int AS messages
               FROM outbox WHERE job_name = 'message.process-batch' AND (payload->'messages'->0->>'accountId')::bigint = $1`,
            [accountId],
          )
        ).rows;
      } finally {
        await db.end();
      }
      report('api logs with Redis away', {
        requests: samples.length,
        byStatus: countByStatus(samples),
        deferredJobs: deferredJobs(lines),
        staged,
        keptHeapEarlyMb: +(early / MB).toFixed(2),
        keptHeapLateMb: +(late / MB).toFixed(2),
      });
    });

    it("writes the limiter's 'Redis unreachable' warning", () => {
      expect(lines.some((l) => l.level >= 40 && /Redis unreachable/.test(l.msg ?? ''))).toBe(true);
    });

    it("writes the 'deferred to relay' line of every accepted message's job", () => {
      expect(accepted).toBeGreaterThan(500);
      // Each accepted message waits in a staged job, and each such job is logged as deferred.
      expect(staged.messages).toBe(accepted);
      expect(deferredJobs(lines)).toBe(staged.jobs);
    });

    it('keeps its heap flat', () => {
      expect(late - early).toBeLessThan(4 * MB);
    });
  });
});
