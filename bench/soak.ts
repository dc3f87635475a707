// `npm run bench:soak -- [--minutes 120] [--get-rate 500] [--post-rate 300] [--record]`: one API and one worker
// under a steady mixed load for hours; errors, lost messages, and both processes' RSS each minute with its slope
// after the first ten minutes (docs/internals/benchmarks.md, "Soak").
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { paced } from './lib/paced';
import { rssMb, sleep, startNode, waitForHttp } from './lib/proc';
import { createAccount, DATABASE_URL, freshStores, seedPets, benchEnv } from './lib/setup';
import { argv, option } from './lib/argv';

const MINUTES = Number(option('--minutes', '120'));
const GET_RATE = Number(option('--get-rate', '500'));
const POST_RATE = Number(option('--post-rate', '300'));
const RECORD = argv.includes('--record');
/** The slope leaves out the warm-up: caches, pools and JIT fill during the first minutes. */
const SETTLE_MINUTES = 10;
const [API_PORT, METRICS_PORT, WORKER_PORT] = [3970, 3971, 3972];
const tmp = mkdtempSync(join(tmpdir(), 'petstore-soak-'));
const log = (msg: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const env = benchEnv({ PORT: String(API_PORT), METRICS_PORT: String(METRICS_PORT), WORKER_PORT: String(WORKER_PORT) });

interface Minute {
  minute: number;
  getOk: number;
  postOk: number;
  failures: number;
  /** e.g. `GET timeout 2, POST ECONNRESET 1`: the client's side of each failure. */
  causes: string;
  apiMb: number;
  workerMb: number;
  /** `petstore_nodejs_heap_after_full_gc_bytes`: what each process holds, without the garbage RSS also counts. */
  apiHeldMb: number;
  workerHeldMb: number;
  /** `nodejs_heap_size_total_bytes`: the V8 heap committed, the part of RSS the collector's pace moves. */
  apiHeapMb: number;
  workerHeapMb: number;
  getP99: number;
  postP99: number;
}

/** Least-squares slope of (x, y), per unit of x. */
export function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxy / sxx;
}

/** What a process holds after its last full GC, and its V8 heap committed now, in MB. */
async function heapMb(port: number): Promise<{ held: number; committed: number }> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
    (res) => res.text(),
    () => '',
  );
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return {
    held: read('petstore_nodejs_heap_after_full_gc_bytes'),
    committed: read('nodejs_heap_size_total_bytes'),
  };
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] ?? NaN;

async function main(): Promise<void> {
  await freshStores(env);
  const account = createAccount('soak', { ...env, LOG_LEVEL: 'error' });
  const pool = new Pool({ connectionString: DATABASE_URL, max: 2 });
  const pets = await seedPets(pool, account.accountId, 1_000, 1_000_000);
  const api = startNode('api', ['dist/apps/api/src/main.js'], { ...env, LOG_FILE: join(tmp, 'api.log') }, tmp, false);
  const worker = startNode(
    'worker',
    ['dist/apps/worker/src/main.js'],
    { ...env, LOG_FILE: join(tmp, 'worker.log') },
    tmp,
    false,
  );
  const url = `http://127.0.0.1:${API_PORT}`;
  await waitForHttp(`${url}/health/ready`, api);
  await waitForHttp(`http://127.0.0.1:${WORKER_PORT}/health/ready`, worker);
  log(`${MINUTES} min at GET ${GET_RATE}/s + POST ${POST_RATE}/s; logs in ${tmp}`);
  let i = 0;
  const auth = { Authorization: `Bearer ${account.apiKey}` };
  const minutes: Minute[] = [];
  for (let minute = 1; minute <= MINUTES; minute++) {
    const [get, post] = await Promise.all([
      paced(
        {
          url: `${url}/v1/pets/${pets[0]}`,
          headers: auth,
          next: () => ({ path: `/v1/pets/${pets[i++ % pets.length]}` }),
        },
        GET_RATE,
        60,
        50,
      ),
      paced(
        {
          url: `${url}/v1/messages`,
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ message: 'soak' }),
        },
        POST_RATE,
        60,
        50,
      ),
    ]);
    const [apiHeap, workerHeap] = await Promise.all([heapMb(METRICS_PORT), heapMb(WORKER_PORT)]);
    const row: Minute = {
      minute,
      getOk: get.ok,
      postOk: post.ok,
      failures: get.failures + post.failures,
      causes: [
        ...Object.entries(get.failureCauses).map(([cause, n]) => `GET ${cause} ${n}`),
        ...Object.entries(post.failureCauses).map(([cause, n]) => `POST ${cause} ${n}`),
      ].join(', '),
      apiMb: rssMb(api.pid),
      workerMb: rssMb(worker.pid),
      apiHeldMb: apiHeap.held,
      workerHeldMb: workerHeap.held,
      apiHeapMb: apiHeap.committed,
      workerHeapMb: workerHeap.committed,
      getP99: p99(get.latenciesMs),
      postP99: p99(post.latenciesMs),
    };
    minutes.push(row);
    log(
      `min ${minute}: ${row.getOk} GET + ${row.postOk} POST ok, ${row.failures} failed${row.causes ? ` (${row.causes})` : ''}, RSS API ${row.apiMb.toFixed(1)} MB, ` +
        `worker ${row.workerMb.toFixed(1)} MB, held after full GC API ${row.apiHeldMb.toFixed(1)} MB, worker ` +
        `${row.workerHeldMb.toFixed(1)} MB, heap committed API ${row.apiHeapMb.toFixed(1)} MB, worker ` +
        `${row.workerHeapMb.toFixed(1)} MB, p99 GET ${row.getP99.toFixed(1)} ms POST ${row.postP99.toFixed(1)} ms`,
    );
  }
  const accepted = minutes.reduce((s, m) => s + m.postOk, 0);
  const open = async () =>
    (
      await pool.query<{ status: string; n: string }>(
        `SELECT status, count(*) AS n FROM messages WHERE account_id = $1 GROUP BY status`,
        [account.accountId],
      )
    ).rows;
  const deadline = Date.now() + 120_000;
  let statuses = await open();
  while (statuses.some((r) => r.status === 'queued' || r.status === 'processing') && Date.now() < deadline) {
    await sleep(1_000);
    statuses = await open();
  }
  await Promise.all([api.stop(), worker.stop()]);
  await pool.end();
  const processed = Number(statuses.find((r) => r.status === 'processed')?.n ?? 0);
  const settled = minutes.filter((m) => m.minute > SETTLE_MINUTES);
  const perTen = (key: 'apiMb' | 'workerMb' | 'apiHeldMb' | 'workerHeldMb' | 'apiHeapMb' | 'workerHeapMb') =>
    slope(settled.map((m) => [m.minute, m[key]])) * 10;
  const failures = minutes.reduce((s, m) => s + m.failures, 0);
  const md = [
    `## Soak: ${MINUTES} min, GET /v1/pets/{id} ${GET_RATE}/s + POST /v1/messages ${POST_RATE}/s, one API and one worker`,
    '',
    `Commit ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()}, Node ${process.version}, ` +
      `started ${new Date(Date.now() - MINUTES * 60_000).toISOString()}. Requests evenly spaced (bench/lib/paced.ts), ` +
      'the processes on both cores.',
    '',
    `- Failed requests: **${failures}** of ${minutes.reduce((s, m) => s + m.getOk + m.postOk + m.failures, 0)}.`,
    `- Messages accepted (202): ${accepted}; processed: ${processed}; **lost: ${accepted - processed}** ` +
      `(${statuses.map((r) => `${r.status} ${r.n}`).join(', ')}).`,
    `- RSS slope after minute ${SETTLE_MINUTES}: API **${perTen('apiMb').toFixed(2)} MB per 10 min**, worker ` +
      `**${perTen('workerMb').toFixed(2)} MB per 10 min** (least squares over each minute's sample).`,
    `- Held after the last full GC (\`petstore_nodejs_heap_after_full_gc_bytes\`), slope after minute ${SETTLE_MINUTES}: ` +
      `API **${perTen('apiHeldMb').toFixed(2)} MB per 10 min**, worker **${perTen('workerHeldMb').toFixed(2)} MB per 10 min**.`,
    `- V8 heap committed (\`nodejs_heap_size_total_bytes\`), slope after minute ${SETTLE_MINUTES}: ` +
      `API ${perTen('apiHeapMb').toFixed(2)} MB per 10 min, worker ${perTen('workerHeapMb').toFixed(2)} MB per 10 min.`,
    '',
    '| minute | GET ok | POST ok | failed | API RSS MB | worker RSS MB | API held MB | worker held MB | ' +
      'API heap MB | worker heap MB | GET p99 ms | POST p99 ms |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...minutes.map(
      (m) =>
        `| ${m.minute} | ${m.getOk} | ${m.postOk} | ${m.failures}${m.causes ? ` (${m.causes})` : ''} | ${m.apiMb.toFixed(1)} | ${m.workerMb.toFixed(1)} | ` +
        `${m.apiHeldMb.toFixed(1)} | ${m.workerHeldMb.toFixed(1)} | ${m.apiHeapMb.toFixed(1)} | ${m.workerHeapMb.toFixed(1)} | ` +
        `${m.getP99.toFixed(1)} | ${m.postP99.toFixed(1)} |`,
    ),
    '',
  ].join('\n');
  process.stdout.write(`\n${md}\n`);
  if (RECORD) {
    mkdirSync('bench/results', { recursive: true });
    const at = new Date().toISOString();
    const file = `bench/results/${at.slice(0, 10)}-${at.slice(11, 13)}${at.slice(14, 16)}-soak.md`;
    writeFileSync(file, md);
    log(`written ${file}`);
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`soak failed: ${err.stack ?? err.message}\nlogs in ${tmp}\n`);
    process.exit(1);
  },
);
