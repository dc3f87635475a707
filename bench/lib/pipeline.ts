import Redis from 'ioredis';
import { Pool } from 'pg';
import { measure, Measurement, Target } from './load';
import { paced } from './paced';
import { cpuMs, Proc, sleep } from './proc';
import { DATABASE_URL, flushRedis, REDIS_URL } from './setup';

export interface PipelineDeps {
  pool: Pool;
  accountId: number;
  post: (url: string) => Target;
  /** Spread over many pets. */
  order: (url: string) => Target;
  startApi: () => Promise<{ proc: Proc; url: string }>;
  startWorker: () => Promise<Proc>;
  log: (msg: string) => void;
  durationS: number;
  /** Offered rates (msg/s) of the lag rows. */
  lagRates: number[];
  lagS: number;
}

export interface LagRow {
  rate: number;
  offered: number;
  p50: number;
  p99: number;
  max: number;
}

export interface PipelineRows {
  intake: Measurement;
  backlog: number;
  drainPerS: number;
  drainS: number;
  workerCpuUsPerMsg: number;
  postgresCpuUsPerMsg: number;
  redisCpuUsPerMsg: number;
  redisBytesPer100k: number;
  lag: LagRow[];
  orderIntake: Measurement;
  orders: number;
  fulfilmentPerS: number;
  fulfilmentS: number;
}

async function open(pool: Pool, accountId: number): Promise<number> {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND status IN ('queued', 'processing')`,
    [accountId],
  );
  return rows[0].n;
}

/** The rate counts from the first poll that saw work done. */
export async function drainRate(
  left: () => Promise<number>,
  total: number,
): Promise<{ perS: number; seconds: number }> {
  let start: { t: number; left: number } | undefined;
  for (const deadline = Date.now() + 900_000; Date.now() < deadline; await sleep(50)) {
    const n = await left();
    const t = performance.now();
    if (!start && n < total) start = { t, left: n };
    if (n === 0 && start) return { perS: start.left / ((t - start.t) / 1000), seconds: (t - start.t) / 1000 };
  }
  throw new Error(`drain stalled with ${await left()} left`);
}

async function openOrders(pool: Pool, accountId: number): Promise<number> {
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND NOT complete`, [
    accountId,
  ]);
  return rows[0].n;
}

/** Other databases on the server excluded. */
async function postgresCpuMs(pool: Pool): Promise<number> {
  const { rows } = await pool.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
    new URL(DATABASE_URL).pathname.slice(1),
  ]);
  return rows.reduce((sum, r) => sum + (cpuMs(r.pid) || 0), 0);
}

async function redisInfo(section: string, field: string): Promise<number> {
  const redis = new Redis(REDIS_URL);
  try {
    return Number(new RegExp(`${field}:([\\d.]+)`).exec(await redis.info(section))?.[1] ?? NaN);
  } finally {
    redis.disconnect();
  }
}

// Shared with every other user of the server, so an upper bound.
const redisCpuMs = async () =>
  ((await redisInfo('cpu', 'used_cpu_sys')) + (await redisInfo('cpu', 'used_cpu_user'))) * 1000;

// Intake with the worker stopped, drain of that backlog with the API idle, then end-to-end lag at
// steady offered rates; then the same intake against drain for orders and their fulfilment.
export async function pipeline(d: PipelineDeps): Promise<PipelineRows> {
  await flushRedis();
  const api = await d.startApi();
  const before = await open(d.pool, d.accountId);
  const redis0 = await redisInfo('memory', 'used_memory');
  d.log('pipeline: measuring POST /v1/messages intake, worker stopped');
  const intake = await measure(d.post(api.url), {
    connections: 50,
    warmupS: 0,
    durationS: d.durationS,
    pid: api.proc.pid,
  });
  const backlog = (await open(d.pool, d.accountId)) - before;
  const redisBytesPer100k = ((await redisInfo('memory', 'used_memory')) - redis0) * (100_000 / backlog);

  d.log(`pipeline: draining ${backlog} messages, API idle`);
  const worker = await d.startWorker();
  const cpu0 = cpuMs(worker.pid as number);
  const pg0 = await postgresCpuMs(d.pool);
  const redisCpu0 = await redisCpuMs();
  const { perS: drainPerS, seconds: drainS } = await drainRate(() => open(d.pool, d.accountId), backlog);
  const workerCpuUsPerMsg = ((cpuMs(worker.pid as number) - cpu0) * 1000) / backlog;
  const postgresCpuUsPerMsg = (((await postgresCpuMs(d.pool)) - pg0) * 1000) / backlog;
  const redisCpuUsPerMsg = (((await redisCpuMs()) - redisCpu0) * 1000) / backlog;

  const lag: LagRow[] = [];
  for (const rate of d.lagRates) {
    d.log(`pipeline: end-to-end lag at ${rate} msg/s offered for ${d.lagS} s`);
    const {
      rows: [{ t0 }],
    } = await d.pool.query('SELECT now() AS t0');
    const target = d.post(api.url);
    const r = await paced(target, rate, d.lagS, 50);
    for (const deadline = Date.now() + 900_000; Date.now() < deadline; await sleep(100)) {
      if ((await open(d.pool, d.accountId)) === 0) break;
    }
    const { rows } = await d.pool.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99, max(ms)::float8 AS max
         FROM (SELECT extract(epoch FROM processed_at - created_at) * 1000 AS ms
                 FROM messages WHERE account_id = $1 AND created_at >= $2) m`,
      [d.accountId, t0],
    );
    lag.push({ rate, offered: r.ok / r.elapsedS, p50: rows[0].p50, p99: rows[0].p99, max: rows[0].max });
  }
  await worker.stop();

  d.log('pipeline: measuring POST /v1/store/orders intake, worker stopped');
  const orderIntake = await measure(d.order(api.url), {
    connections: 50,
    warmupS: 0,
    durationS: d.durationS,
    pid: api.proc.pid,
  });
  const orders = await openOrders(d.pool, d.accountId);
  d.log(`pipeline: fulfilling ${orders} orders, API idle`);
  const fulfiller = await d.startWorker();
  const fulfilment = await drainRate(() => openOrders(d.pool, d.accountId), orders);
  await fulfiller.stop();
  await api.proc.stop();
  return {
    orderIntake,
    orders,
    fulfilmentPerS: fulfilment.perS,
    fulfilmentS: fulfilment.seconds,
    intake,
    backlog,
    drainPerS,
    drainS,
    workerCpuUsPerMsg,
    postgresCpuUsPerMsg,
    redisCpuUsPerMsg,
    redisBytesPer100k,
    lag,
  };
}

const n0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

export function renderPipeline(p: PipelineRows): string {
  return [
    '## Pipeline: what one API accepts against what one worker drains',
    'One API process and one worker process. Intake: autocannon, 50 connections, worker stopped. Drain: the ' +
      'backlog so built, API idle. CPU per message: the worker process, and the Postgres backends serving the ' +
      'bench database (WAL writer and checkpointer excluded), and the whole Redis server. Lag: processed_at - created_at of the messages ' +
      'offered at a steady rate, evenly spaced (bench/lib/paced.ts), with both running.',
    [
      '| what | figure |',
      '| --- | ---: |',
      `| intake, one API (msg/s) | ${n0(p.intake.rps)} |`,
      `| drain, one worker (msg/s; ${n0(p.backlog)} queued, ${p.drainS.toFixed(1)} s) | ${n0(p.drainPerS)} |`,
      `| drain / intake | ${(p.drainPerS / p.intake.rps).toFixed(2)}× |`,
      `| worker CPU per message (µs) | ${n0(p.workerCpuUsPerMsg)} |`,
      `| Postgres CPU per message (µs) | ${n0(p.postgresCpuUsPerMsg)} |`,
      `| Redis CPU per message (µs; the whole server, shared) | ${n0(p.redisCpuUsPerMsg)} |`,
      `| Redis memory per 100k queued message jobs (MB) | ${(p.redisBytesPer100k / 1e6).toFixed(1)} |`,
      `| order intake, one API (orders/s) | ${n0(p.orderIntake.rps)} |`,
      `| fulfilment, one worker (orders/s; ${n0(p.orders)} open, ${p.fulfilmentS.toFixed(1)} s) | ${n0(p.fulfilmentPerS)} |`,
      `| fulfilment / order intake | ${(p.fulfilmentPerS / p.orderIntake.rps).toFixed(2)}× |`,
    ].join('\n'),
    [
      '| offered msg/s | accepted msg/s | lag p50 ms | lag p99 ms | lag max ms |',
      '| ---: | ---: | ---: | ---: | ---: |',
      ...p.lag.map((l) => `| ${n0(l.rate)} | ${n0(l.offered)} | ${n0(l.p50)} | ${n0(l.p99)} | ${n0(l.max)} |`),
    ].join('\n'),
  ].join('\n\n');
}
