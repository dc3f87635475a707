// `npm run bench:data`: the data-scale bench. Seeds its own database with many
// tenants' rows (default 10 M messages, 10 M events, 1 M pets, 1,000 accounts; --quick: a tenth),
// then reports:
// 1. each hot query's time and plan (generic plan, as the API's prepared statements run them),
//    for a small tenant and for the biggest one;
// 2. the noisy-neighbour ratio: a small tenant's GET /v1/pets p99 while the biggest tenant runs
//    20 parallel name searches, against alone (goal <= 1.5x);
// 3. table sizes every 30 s over a steady message load (default 10 minutes; --quick: 2) with a
//    short retention (2 minutes), to see them plateau.
// 4. partitioned history: messages in time partitions against an unpartitioned copy with the old
//    batch-DELETE retention: retention cost, sizes, read p99 (bench/lib/history.ts).
// Flags: --quick, --record (writes bench/results/YYYY-MM-DD-HHMM-data.md), --load-minutes N,
// --only queries|history|plateau (repeatable), --history-rows N (default 10 M; --quick 1 M),
// --seed-messages N (messages and events each beside the pets; default 10 M, --quick 1 M),
// --partition-width-seconds N (default 3600), --history-retention-hours N (default 24),
// --api-env NAME=VALUE (repeatable: one more API process with that variable, compared with the default), --neighbour-rounds N (7),
// --busy-core (a process spinning on a core through the noisy-neighbour rounds), --stand-in BUSY:IDLE (in the
// noisy tenant's place, a process outside the service alternating BUSY ms of CPU and IDLE ms of sleep),
// --noisy-lists N (the noisy tenant sends N plain list requests/s instead of its searches).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Pool } from 'pg';
import { loadConfig } from '@app/config';
import { feedPage, raw, Sql, sql } from '@app/database';
import { DatabaseCost, partitionedHistory, tableSizes } from './lib/history';
import { measure } from './lib/load';
import { PacedClient, percentile } from './lib/paced';
import {
  coresBetween,
  cpuByProgram,
  cpuMs,
  pinLoadGenerator,
  Proc,
  rssMb,
  sleep,
  spawnNodeScript,
  startNode,
  waitForHttp,
} from './lib/proc';
import { claimDatabase, createAccount, flushRedis } from './lib/setup';
import { argv, option } from './lib/argv';

pinLoadGenerator();

const QUICK = argv.includes('--quick');
const SCALE = QUICK ? 0.1 : 1;
const SEED = {
  accounts: 1_000,
  pets: Math.round(1_700_000 * SCALE),
  /** The biggest tenant's share of the pets (the noisy neighbour, whose name searches are measured). */
  bigTenantPets: Math.round(1_000_000 * SCALE),
  messages: Number(option('--seed-messages', String(Math.round(10_000_000 * SCALE)))),
  events: Number(option('--seed-messages', String(Math.round(10_000_000 * SCALE)))),
};
const LOAD_MINUTES = Number(option('--load-minutes', QUICK ? '2' : '10'));
/** Every value of a flag that may be given more than once. */
const repeated = (name: string) => argv.flatMap((a, i) => (argv[i - 1] === name ? [a] : []));
const ONLY = repeated('--only');
const runs = (section: 'queries' | 'history' | 'plateau') => !ONLY.length || ONLY.includes(section);
const HISTORY = {
  rows: Number(option('--history-rows', QUICK ? '1000000' : '10000000')),
  widthSeconds: Number(option('--partition-width-seconds', '3600')),
  retentionHours: Number(option('--history-retention-hours', '24')),
};
const LOAD_RATE = 200; // messages/s during the steady load
const QUIET_RATE = 200; // the quiet tenant's list requests/s in the noisy-neighbour rounds
const SEARCH_RATE = 20; // name searches/s of the steady rows
const NEIGHBOUR_ROUNDS = Number(option('--neighbour-rounds', '7'));
// A noisy-neighbour round: the noisy tenant's load comes and goes in WINDOWS windows of WINDOW_S
// seconds while the quiet tenant's runs throughout; an answer counts for the window its request was
// due in, unless due in the window's first SETTLE_MS (the searches starting, or still draining).
const [WINDOWS, WINDOW_S, SETTLE_MS] = [3, 3, 1000];
/** `--api-env NAME=VALUE` (repeatable): one more API process with that variable, compared with the product default in the noisy-neighbour rounds. */
const API_ENVS = repeated('--api-env');
const BUSY_CORE = argv.includes('--busy-core');
/** `--stand-in BUSY:IDLE`: in the noisy tenant's place, a process outside the service busy BUSY ms then idle IDLE ms in turn. */
const STAND_IN = option('--stand-in', '');
/** `--noisy-lists N`: the noisy tenant sends N plain list requests/s instead of its searches (the API's share of the interference). */
const NOISY_LISTS = Number(option('--noisy-lists', '0'));
const RETENTION_DAYS = 2 / (24 * 60); // 2 minutes

const DATABASE_URL = process.env.BENCH_DATA_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/petstore_bench_data';
const REDIS_URL = process.env.BENCH_DATA_REDIS_URL ?? 'redis://127.0.0.1:6379/8';
const tmp = mkdtempSync(join(tmpdir(), 'petstore-bench-data-'));
const log = (msg: string) => process.stderr.write(`[bench:data ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const env: Record<string, string> = {
  NODE_ENV: 'production',
  DATABASE_URL,
  REDIS_URL,
  METRICS_PORT: '0',
  LOG_LEVEL: 'warn',
  DEMO_SEED: 'false',
  WEBHOOK_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
  API_KEY_TAG_KEYS: `b1:${randomBytes(32).toString('base64')}`,
  RETENTION_MESSAGES_DAYS: String(RETENTION_DAYS),
  RETENTION_EVENTS_DAYS: String(RETENTION_DAYS),
  RETENTION_WEBHOOK_DELIVERIES_DAYS: String(RETENTION_DAYS),
  WEBHOOK_MAX_AGE_SECONDS: '60',
  RETENTION_INTERVAL_MS: '10000',
  PARTITION_WIDTH_SECONDS: '60',
};

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function start(
  app: 'api' | 'worker',
  extraEnv: Record<string, string> = {},
): Promise<{ proc: Proc; url: string; metricsUrl: string }> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const portVar = app === 'api' ? 'PORT' : 'WORKER_PORT';
  const proc = startNode(
    `${app}-${port}`,
    [`dist/apps/${app}/src/main.js`],
    {
      ...env,
      ...extraEnv,
      [portVar]: String(port),
      METRICS_PORT: String(metricsPort),
      LOG_FILE: join(tmp, `${app}-${port}.log`),
    },
    tmp,
    app === 'api',
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health/ready`, proc, 120_000);
  return { proc, url, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
}

/** GC pause time since the process started, and event-loop delay since the previous scrape (prom-client resets it). */
async function loopStats(metricsUrl: string): Promise<{ gcMs: number; delayP99Ms: number; delayMaxMs: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const values = (name: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`petstore_${name}`))
      .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)) * 1000);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    gcMs: sum(values('nodejs_gc_duration_seconds_sum')),
    delayP99Ms: values('nodejs_eventloop_lag_p99_seconds ')[0],
    delayMaxMs: values('nodejs_eventloop_lag_max_seconds ')[0],
  };
}

/** Many tenants' rows, inserted set-wise in chunks (a few minutes at full scale). */
async function seed(pool: Pool, big: number, small: number): Promise<void> {
  await pool.query(
    `INSERT INTO accounts (name, plan) SELECT 'tenant ' || g, 'free' FROM generate_series(3, $1::int) g`,
    [SEED.accounts],
  );
  const [{ first }] = (await pool.query(`SELECT min(id)::int AS first FROM accounts`)).rows;
  await pool.query(`INSERT INTO categories (account_id, name) SELECT id, 'seeded' FROM accounts`);
  log(`seeding ${SEED.pets} pets (${SEED.bigTenantPets} of them one tenant's)`);
  await pool.query(
    `INSERT INTO pets (account_id, category_id, name, status, stock)
     SELECT a, (SELECT id FROM categories WHERE account_id = a), 'pet ' || md5(g::text), 'available', 1
       FROM generate_series(1, $1::int) g, LATERAL (SELECT CASE WHEN g <= $2 THEN $3 ELSE $5 + g % ($4 - 2) END AS a) t`,
    [SEED.pets, SEED.bigTenantPets, big, SEED.accounts, first + 2],
  );
  await pool.query(
    `INSERT INTO pets (account_id, category_id, name, status, stock)
     SELECT $1, (SELECT id FROM categories WHERE account_id = $1), 'quiet ' || g, 'available', 1 FROM generate_series(1, 50) g`,
    [small],
  );
  const chunk = 1_000_000;
  for (let from = 1; from <= SEED.messages; from += chunk) {
    const to = Math.min(SEED.messages, from + chunk - 1);
    log(`seeding messages ${from}-${to}`);
    await pool.query(
      `INSERT INTO messages (id, account_id, message, status, attempts, created_at, processed_at)
       SELECT 'msg_' || substr(md5(g::text), 1, 28), $3 + g % $4, 'seeded message ' || g, 'processed', 1,
              now() - interval '1 day' + g * interval '1 ms', now()
         FROM generate_series($1::int, $2::int) g`,
      [from, to, first, SEED.accounts],
    );
  }
  for (let from = 1; from <= SEED.events; from += chunk) {
    const to = Math.min(SEED.events, from + chunk - 1);
    log(`seeding events ${from}-${to}`);
    await pool.query(
      `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out, created_at)
       SELECT $3 + g % $4, 'message.processed', 'message', 'msg_' || substr(md5(g::text), 1, 28), 1, '{"seeded":true}', true,
              now() - interval '1 day' + g * interval '1 ms'
         FROM generate_series($1::int, $2::int) g`,
      [from, to, first, SEED.accounts],
    );
  }
  log('VACUUM ANALYZE');
  await pool.query('VACUUM ANALYZE');
}

/** PetsService.list's name search (planned with its values each call: see planOf's `custom`). */
const NAME_SEARCH_SQL = `SELECT p.id FROM pets p WHERE p.account_id = $1 AND p.id > $2 AND lower(p.name) LIKE $3
  ORDER BY p.account_id, p.id LIMIT 21`;

/** A feed's first page as the services write it (feedPage), with a filter; the tenant is its first value. */
function feedFirstPage(table: string, filter: Sql = raw('')): { sql: string; params: (tenant: number) => unknown[] } {
  const page = feedPage('t', 'account_id', 0, 'oldest', undefined);
  const q = sql`SELECT t.id FROM ${raw(table)} t WHERE ${page.where} ${filter} ${page.orderBy} LIMIT ${21}`;
  return { sql: q.text, params: (t) => [t, ...q.values.slice(1)] };
}

/** The API's list queries and the worker's sweep and retention queries, as they are written. */
function hotQueries(): { name: string; sql: string; params: (tenant: number) => unknown[]; custom?: boolean }[] {
  return [
    {
      name: 'pets, first page',
      sql: `SELECT id FROM pets p WHERE (p.account_id, p.id) > ($1, $2) AND p.account_id = $1 ORDER BY p.account_id, p.id LIMIT 21`,
      params: (t) => [t, 0],
    },
    { name: 'pets, name search (3 chars)', sql: NAME_SEARCH_SQL, params: (t) => [t, 0, '%abc%'], custom: true },
    { name: 'pets, name search (6 chars)', sql: NAME_SEARCH_SQL, params: (t) => [t, 0, '%abcdef%'], custom: true },
    { name: 'pets, name search (no match)', sql: NAME_SEARCH_SQL, params: (t) => [t, 0, '%zqx%'], custom: true },
    { name: 'messages, first page', ...feedFirstPage('messages') },
    { name: 'messages, by status', ...feedFirstPage('messages', sql`AND t.status = ${'failed'}`) },
    { name: 'events, feed', ...feedFirstPage('events') },
    { name: 'events, by type', ...feedFirstPage('events', sql`AND t.type = ${'pet.created'}`) },
    {
      name: 'sweep: messages due',
      sql: `SELECT id FROM messages WHERE status IN ('queued', 'processing') AND created_at < now() - make_interval(secs => $1::double precision / 1000) ORDER BY created_at, id LIMIT 500`,
      params: () => [30_000],
    },
    {
      name: 'sweep: events due',
      sql: `SELECT id FROM events WHERE NOT fanned_out AND created_at < now() - make_interval(secs => $1::double precision / 1000) ORDER BY created_at, id LIMIT 500`,
      params: () => [30_000],
    },
    // Retention drops whole partitions; before each drop it probes the partition for rows not final yet.
    {
      name: 'retention: open-row probe, messages',
      sql: `SELECT 1 FROM messages WHERE status IN ('queued', 'processing') LIMIT 1`,
      params: () => [],
    },
    {
      name: 'retention: open-row probe, events',
      sql: `SELECT 1 FROM events WHERE NOT fanned_out LIMIT 1`,
      params: () => [],
    },
  ];
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const flatten = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)];

/** The generic plan's time (best of 5) and its scans, as a prepared statement runs it (`custom`: as an unnamed one). */
async function planOf(
  pool: Pool,
  sql: string,
  params: unknown[],
  custom = false,
): Promise<{ ms: number; scans: string }> {
  const client = await pool.connect();
  try {
    await client.query(`SET plan_cache_mode = ${custom ? 'force_custom_plan' : 'force_generic_plan'}`);
    await client.query(`PREPARE probe AS ${sql}`);
    const literal = params
      .map((p) => (typeof p === 'number' ? String(p) : `'${String(p).replace(/'/g, "''")}'`))
      .join(', ');
    let best = Infinity;
    let plan: PlanNode | undefined;
    for (let i = 0; i < 5; i++) {
      const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE probe${literal && `(${literal})`}`);
      const [{ Plan, 'Execution Time': ms }] = rows[0]['QUERY PLAN'];
      if (ms < best) [best, plan] = [ms, Plan];
    }
    const scans = flatten(plan!)
      .filter((n) => /Scan/.test(n['Node Type']))
      .map(
        (n) =>
          `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''} (${(n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)} rows read)`,
      )
      .join('; ');
    return { ms: best, scans };
  } finally {
    await client.query('DEALLOCATE ALL').catch(() => undefined);
    await client.query('RESET plan_cache_mode').catch(() => undefined);
    client.release();
  }
}

async function sizes(pool: Pool): Promise<Record<string, number>> {
  const s = await tableSizes(pool, ['messages', 'events', 'event_sequences', 'webhook_deliveries', 'outbox']);
  return Object.fromEntries(Object.entries(s).map(([name, t]) => [name, t.heap + t.indexes]));
}

/** A fresh, migrated bench database with the quiet and the noisy tenant (ids 1 and 2). */
async function freshDatabase(): Promise<
  [quiet: { accountId: number; apiKey: string }, noisy: { accountId: number; apiKey: string }]
> {
  await claimDatabase(DATABASE_URL);
  await flushRedis(REDIS_URL);
  execFileSync(process.execPath, ['dist/apps/cli/src/main.js', 'migrate'], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  return [createAccount('quiet tenant', env), createAccount('noisy tenant', env)];
}

async function queriesAndNeighbours(md: string[]): Promise<void> {
  const [quietKey, noisyKey] = await freshDatabase();
  const pool = new Pool({ connectionString: DATABASE_URL, max: 4 });
  try {
    const started = Date.now();
    const [small, big] = [quietKey.accountId, noisyKey.accountId];
    await seed(pool, big, small);
    md.push(
      `Seed: ${SEED.accounts} accounts, ${SEED.pets.toLocaleString('en')} pets (${SEED.bigTenantPets.toLocaleString('en')} in the noisy tenant, 50 in the quiet one), ` +
        `${SEED.messages.toLocaleString('en')} messages, ${SEED.events.toLocaleString('en')} events, in ${Math.round((Date.now() - started) / 1000)} s.`,
      '',
      '## Hot queries (generic plans, best of 5)',
      '',
      '| query | quiet tenant ms | its scans | noisy tenant ms | its scans |',
      '|---|---|---|---|---|',
    );
    for (const q of hotQueries()) {
      const [s, b] = [
        await planOf(pool, q.sql, q.params(small), q.custom),
        await planOf(pool, q.sql, q.params(big), q.custom),
      ];
      md.push(`| ${q.name} | ${s.ms.toFixed(2)} | ${s.scans} | ${b.ms.toFixed(2)} | ${b.scans} |`);
      log(`${q.name}: ${s.ms.toFixed(2)} / ${b.ms.toFixed(2)} ms`);
    }
  } finally {
    await pool.end();
  }

  const api = await start('api');
  const extraApis: Proc[] = [];
  try {
    // A steady rate, timed to the microsecond (bench/lib/paced.ts): autocannon's whole-millisecond p99s of 1-3 ms
    // made the ratio a matter of rounding.
    const quiet = {
      url: `${api.url}/v1/pets?limit=20`,
      headers: { Authorization: `Bearer ${quietKey.apiKey}` },
      rate: QUIET_RATE,
    };
    const searches = ['abc', 'c1f', 'zqx', 'f0e', '9e2', 'abcdef'];
    let n = 0;
    const noisy = {
      url: `${api.url}/v1/pets?limit=20&name=abc`,
      headers: { Authorization: `Bearer ${noisyKey.apiKey}` },
      next: () => ({ path: `/v1/pets?limit=20&name=${searches[n++ % searches.length]}` }),
    };
    md.push(
      '',
      `## Name search at ${SEED.bigTenantPets.toLocaleString('en')} pets in one tenant`,
      '',
      `The noisy tenant alone, \`GET /v1/pets?limit=20&name=...\` on 2 connections, at a steady ${SEARCH_RATE}/s for 15 s and as fast as answered for 5 s ` +
        "(a flood, which the account's share of the clock paces once its burst is spent); one answer, no next link, when fewer than 20 match:",
      '',
      `| search | p50 ms at ${SEARCH_RATE}/s | p99 ms at ${SEARCH_RATE}/s | flood: answered/s | flood: p99 ms | non-2xx |`,
      '|---|---|---|---|---|---|',
    );
    const hex = () =>
      Math.floor(Math.random() * 4096)
        .toString(16)
        .padStart(3, '0');
    // Warm the noisy tenant's index and heap pages and the API's search path, then let its burst refill.
    await measure(
      { ...noisy, next: () => ({ path: `/v1/pets?limit=20&name=${hex()}` }) },
      { connections: 2, warmupS: 0, durationS: 5 },
    );
    await sleep(5_000);
    for (const [what, name] of [
      ['3 characters (random hex: ~0.7 % of names)', hex],
      ['3 characters, no match', () => `zq${'xyz'[Math.floor(Math.random() * 3)]}`],
      ['6 characters (random hex)', () => hex() + hex()],
      ['2 characters (refused: 400)', () => hex().slice(1)],
    ] as const) {
      const search = { ...noisy, next: () => ({ path: `/v1/pets?limit=20&name=${name()}` }) };
      const steady = await measure({ ...search, rate: SEARCH_RATE }, { connections: 2, warmupS: 2, durationS: 15 });
      const flood = await measure(search, { connections: 2, warmupS: 1, durationS: 5 });
      md.push(
        `| ${what} | ${steady.p50.toFixed(2)} | ${steady.p99.toFixed(2)} | ${Math.round(flood.rps)} | ${flood.p99} | ${steady.failures + flood.failures} |`,
      );
      log(`name search, ${what}: p99 ${steady.p99.toFixed(2)} ms at ${SEARCH_RATE}/s, ${flood.p99} ms flooding`);
      // The flood spent the account's burst: the next row starts with it whole again.
      await sleep(5_000);
    }
    // One API process per variant compared (--api-env), each round visiting them in turn.
    const apis = [
      { variant: 'product default', api },
      ...(await Promise.all(
        API_ENVS.map(async (variant) => {
          const [name, ...value] = variant.split('=');
          return { variant, api: await start('api', { [name]: value.join('=') }) };
        }),
      )),
    ];
    extraApis.push(...apis.slice(1).map((a) => a.api.proc));
    type Side = 'alone' | 'beside';
    type LoopWindow = { gcMs: number; delayP99Ms: number; delayMaxMs: number };
    type Window = { side: Side; from: number; to: number; cores: Record<string, number>; loop: LoopWindow };
    type Round = {
      variant: string;
      latencies: Record<Side, number[]>;
      searches: number;
      /** Averaged over the round's windows beside the searches. */
      cores: Record<string, number>;
      /** Summed (GC) or the highest (delays) over each side's windows. */
      loop: Record<Side, LoopWindow>;
      apiRssMb: number;
    };
    const rounds: Round[] = [];
    const p99 = (r: Round, side: Side) => percentile(r.latencies[side], 99);
    const programs = ['postgres', 'redis-server'];
    // One window of the round: the cores each part kept busy, and the API's GC and event-loop delay.
    const windowOf = async <T>(
      side: Side,
      target: { proc: Proc; metricsUrl: string },
      work: () => Promise<T>,
    ): Promise<[T, Window]> => {
      const pid = target.proc.pid;
      const loop0 = await loopStats(target.metricsUrl);
      const wallClock = () => performance.timeOrigin + performance.now(); // as paced's dueAtMs
      const [from, api0, bench0, cpu0] = [wallClock(), cpuMs(pid), process.cpuUsage(), cpuByProgram(programs)];
      const result = await work();
      const [to, cpu1, bench1] = [wallClock(), cpuByProgram(programs), process.cpuUsage(bench0)];
      const loop1 = await loopStats(target.metricsUrl);
      const ms = to - from;
      const cores = {
        ...coresBetween(cpu0, cpu1, ms),
        api: (cpuMs(pid) - api0) / ms,
        bench: (bench1.user + bench1.system) / 1000 / ms,
      };
      return [result, { side, from, to, cores, loop: { ...loop1, gcMs: loop1.gcMs - loop0.gcMs } }];
    };
    // The quiet tenant is a client of its own: the noisy tenant's load generator and its garbage are elsewhere.
    const quietClient = await PacedClient.start();
    // --busy-core: a process spinning on a core throughout, as a busy database host would have.
    const spinner = BUSY_CORE ? spawnNodeScript('for (;;) {}') : undefined;
    for (let round = 0; round < NEIGHBOUR_ROUNDS; round++) {
      for (const { variant, api: target } of apis) {
        const at = (t: typeof quiet | typeof noisy) => ({ ...t, url: t.url.replace(api.url, target.url) });
        const noisyWindow = (): Promise<{ rps: number }> =>
          NOISY_LISTS
            ? measure(
                { ...at(noisy), next: undefined, url: at(quiet).url, rate: NOISY_LISTS },
                { connections: 20, warmupS: 0, durationS: WINDOW_S },
              )
            : STAND_IN
              ? standIn(STAND_IN, WINDOW_S)
              : measure(at(noisy), { connections: 20, warmupS: 0, durationS: WINDOW_S });
        await quietClient.run(at(quiet), QUIET_RATE, 1, 2); // warm-up
        // The quiet tenant's load runs throughout; the noisy tenant's comes and goes in windows.
        const quietRun = quietClient.run(at(quiet), QUIET_RATE, WINDOWS * 2 * WINDOW_S, 2);
        const windows: Window[] = [];
        let searches = 0;
        for (let w = 0; w < WINDOWS; w++) {
          windows.push((await windowOf('alone', target, () => sleep(WINDOW_S * 1000)))[1]);
          const [load, window] = await windowOf('beside', target, noisyWindow);
          windows.push(window);
          searches += load.rps / WINDOWS;
        }
        const quietAnswers = await quietRun;
        const latencies: Record<Side, number[]> = { alone: [], beside: [] };
        quietAnswers.dueAtMs.forEach((due, i) => {
          const window = windows.find((w) => w.from + SETTLE_MS <= due && due < w.to);
          if (window) latencies[window.side].push(quietAnswers.latenciesMs[i]);
        });
        const sideLoop = (side: Side): LoopWindow => {
          const mine = windows.filter((w) => w.side === side).map((w) => w.loop);
          return {
            gcMs: mine.reduce((sum, l) => sum + l.gcMs, 0),
            delayP99Ms: Math.max(...mine.map((l) => l.delayP99Ms)),
            delayMaxMs: Math.max(...mine.map((l) => l.delayMaxMs)),
          };
        };
        const beside = windows.filter((w) => w.side === 'beside');
        const cores = Object.fromEntries(
          Object.keys(beside[0].cores).map((k) => [k, beside.reduce((sum, w) => sum + w.cores[k], 0) / beside.length]),
        );
        const r: Round = {
          variant,
          latencies,
          searches,
          cores,
          loop: { alone: sideLoop('alone'), beside: sideLoop('beside') },
          apiRssMb: rssMb(target.proc.pid, 'VmHWM'),
        };
        rounds.push(r);
        log(
          `noisy neighbour round ${round + 1}, ${variant}: p99 ${p99(r, 'alone').toFixed(2)} ms alone, ` +
            `${p99(r, 'beside').toFixed(2)} ms beside ${Math.round(searches)} searches/s; ` +
            JSON.stringify({ cores, loop: r.loop, rss: r.apiRssMb }, (_k, v) =>
              typeof v === 'number' ? +v.toFixed(2) : v,
            ),
        );
      }
    }
    spinner?.kill('SIGKILL');
    quietClient.stop();
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    md.push(
      '',
      '## Noisy neighbour',
      '',
      `The quiet tenant's \`GET /v1/pets?limit=20\` at a steady ${QUIET_RATE}/s (2 connections) throughout a round, while the noisy tenant (${SEED.bigTenantPets.toLocaleString('en')} pets) runs 20 parallel name searches of 3-6 characters in ${WINDOWS} windows of ${WINDOW_S} s, ` +
        `each after ${WINDOW_S} s without them. An answer counts as alone or beside by the window its request was due in, unless due in the window's first ${SETTLE_MS} ms. ` +
        "Interleaving this finely puts the machine's own stalls into both sides alike. " +
        "The cores each part kept busy beside the searches (the API is pinned to one core, the load generator, this process, to the other), and the API's GC time and event-loop delay (its metrics; prom-client samples the delay every 10 ms) on each side. " +
        (BUSY_CORE ? '**With one more process spinning on a core all along (`--busy-core`).** ' : '') +
        (NOISY_LISTS
          ? `**No searches: the noisy tenant sends ${NOISY_LISTS} plain list requests/s instead (\`--noisy-lists\`).** `
          : '') +
        (STAND_IN
          ? `**No searches: in their place, a process outside the service busy ${STAND_IN.split(':')[0]} ms and idle ${STAND_IN.split(':')[1]} ms in turn (\`--stand-in ${STAND_IN}\`).** `
          : '') +
        `\`API\` is the product default (\`NAME_SEARCH_ACCOUNT_SHARE\` ${loadConfig(env).nameSearchSlots.share}) or one more API process with the variable shown (\`--api-env\`):`,
      '',
      '| round | API | p99 alone (ms) | p99 beside (ms) | ratio | searches answered/s | cores: machine | Postgres | API | bench | Redis | API GC ms, alone / beside | API event-loop delay p99 / max ms, alone; beside | API peak RSS MB |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rounds.map(
        (r, i) =>
          `| ${Math.floor(i / apis.length) + 1} | ${r.variant} | ${p99(r, 'alone').toFixed(2)} | ${p99(r, 'beside').toFixed(2)} | ${(p99(r, 'beside') / p99(r, 'alone')).toFixed(2)} | ${Math.round(r.searches)} | ` +
          ['machine', 'postgres', 'api', 'bench', 'redis-server'].map((k) => (r.cores[k] ?? 0).toFixed(2)).join(' | ') +
          ` | ${r.loop.alone.gcMs.toFixed(0)} / ${r.loop.beside.gcMs.toFixed(0)} | ` +
          `${r.loop.alone.delayP99Ms.toFixed(1)} / ${r.loop.alone.delayMaxMs.toFixed(1)}; ${r.loop.beside.delayP99Ms.toFixed(1)} / ${r.loop.beside.delayMaxMs.toFixed(1)} | ${r.apiRssMb.toFixed(0)} |`,
      ),
      '',
      ...apis.map(({ variant }) => {
        const mine = rounds.filter((r) => r.variant === variant);
        const pooled = (side: Side) =>
          percentile(
            mine.flatMap((r) => r.latencies[side]),
            99,
          );
        return (
          `API ${variant}: median of the rounds' ratios **${median(mine.map((r) => p99(r, 'beside') / p99(r, 'alone'))).toFixed(2)}x**; ` +
          `p99 of all rounds' answers pooled, ${pooled('alone').toFixed(2)} ms alone and ${pooled('beside').toFixed(2)} ms beside: ` +
          `**${(pooled('beside') / pooled('alone')).toFixed(2)}x** (goal <= 1.5x); searches answered: ${Math.round(median(mine.map((r) => r.searches)))}/s.`
        );
      }),
    );
  } finally {
    await Promise.all([api.proc, ...extraApis].map((p) => p.stop()));
  }
}

/** A process outside the service that alternates `busy` ms of CPU with `idle` ms of sleep for `seconds`. */
async function standIn(pattern: string, seconds: number): Promise<{ rps: number }> {
  const [busy, idle] = pattern.split(':').map(Number);
  const child = spawnNodeScript(
    `const end = Date.now() + ${seconds * 1000};
     (function tick() { const t = Date.now(); while (Date.now() - t < ${busy}); if (Date.now() < end) setTimeout(tick, ${idle}); })();`,
  );
  await new Promise((resolve) => child.once('exit', resolve));
  return { rps: 0 };
}

/** A fresh database under a steady message load with a short retention: its sizes every 30 s. */
async function plateau(md: string[]): Promise<void> {
  const [tenant] = await freshDatabase();
  const pool = new Pool({ connectionString: DATABASE_URL, max: 2 });
  const api = await start('api');
  const worker = await start('worker');
  try {
    const headers = { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' };
    const body = JSON.stringify({ message: 'steady load of the data bench' });
    const samples: Record<string, number>[] = [];
    const cost = await DatabaseCost.start(pool);
    let accepted = 0;
    const t0 = Date.now();
    const loader = (async () => {
      while (Date.now() - t0 < LOAD_MINUTES * 60_000) {
        const s = Date.now();
        await Promise.all(
          Array.from({ length: LOAD_RATE }, () =>
            fetch(`${api.url}/v1/messages`, { method: 'POST', headers, body }).then((r) => {
              if (r.status === 202) accepted++;
              return r.arrayBuffer();
            }),
          ),
        );
        await sleep(Math.max(0, 1_000 - (Date.now() - s)));
      }
    })();
    while (Date.now() - t0 < LOAD_MINUTES * 60_000) {
      await sleep(30_000);
      // The machine's Postgres runs with autovacuum off: the bench vacuums as autovacuum would.
      await pool.query('VACUUM messages, events, event_sequences, outbox');
      const s = await sizes(pool);
      const [{ rows }] = (await pool.query(`SELECT count(*)::int AS rows FROM messages`)).rows;
      samples.push({ minute: (Date.now() - t0) / 60_000, rows, ...s, ...(await cost.sample()), accepted });
      log(`at ${((Date.now() - t0) / 60_000).toFixed(1)} min: ${rows} messages, ${(s.messages / 1e6).toFixed(1)} MB`);
    }
    await loader;
    md.push(
      '',
      `## Table sizes under ${LOAD_RATE} messages/s with a ${Math.round(RETENTION_DAYS * 24 * 60)}-minute retention (fresh database)`,
      '',
      '| minute | messages rows | messages MB | events MB | event_sequences MB | outbox MB |',
      '|---|---|---|---|---|---|',
      ...samples.map(
        (s) =>
          `| ${s.minute.toFixed(1)} | ${s.rows} | ${(s.messages / 1e6).toFixed(1)} | ${(s.events / 1e6).toFixed(1)} | ${(s.event_sequences / 1e6).toFixed(1)} | ${(s.outbox / 1e6).toFixed(2)} |`,
      ),
      '',
      "Sizes include indexes and TOAST. The bench runs VACUUM every 30 s because the machine's Postgres has autovacuum off.",
      '',
      perMessage(samples),
    );
  } finally {
    await worker.proc.stop();
    await api.proc.stop();
    await pool.end();
  }
}

/** Postgres's cost per accepted message once retention runs (after the retention period), from the samples. */
function perMessage(samples: Record<string, number>[]): string {
  const steady = samples.filter((s, i) => i > 0 && s.minute > RETENTION_DAYS * 24 * 60 + 0.5);
  if (!steady.length) return 'Too short a load for a steady-state cost per message (retention had not run yet).';
  const from = samples[samples.indexOf(steady[0]) - 1];
  const messages = steady[steady.length - 1].accepted - from.accepted;
  const sum = (k: string) => steady.reduce((a, s) => a + s[k], 0);
  return (
    `Postgres per accepted message from minute ${from.minute.toFixed(1)} to ${steady[steady.length - 1].minute.toFixed(1)} ` +
    `(${messages.toLocaleString('en')} messages; the API's insert, the worker's batches, events, outbox, retention's drops ` +
    `and the bench's VACUUM): **${((sum('cpuMs') * 1000) / messages).toFixed(0)} µs of backend CPU** (the API's and the ` +
    `worker's backends, \`/proc/<pid>/stat\`; the bench's VACUUM not included) and **${(sum('walBytes') / messages).toFixed(0)} bytes of WAL** (records touching this ` +
    `database's blocks, \`pg_walinspect\`). At ${LOAD_RATE}/s batches and group commits are small: an upper bound for higher rates.`
  );
}

async function main(): Promise<void> {
  const md: string[] = [
    `# Data-scale bench, ${new Date().toISOString().slice(0, 16)}Z${QUICK ? ' (--quick)' : ''}`,
    '',
    `Node ${process.version} (the bench and the apps it starts), \`${process.argv.slice(2).join(' ')}\`.`,
    '',
  ];
  if (runs('queries')) await queriesAndNeighbours(md);
  if (runs('history')) {
    await freshDatabase();
    await partitionedHistory(md, { databaseUrl: DATABASE_URL, accounts: SEED.accounts, log, ...HISTORY });
  }
  if (runs('plateau')) await plateau(md);
  const text = md.join('\n') + '\n';
  process.stdout.write(text);
  if (argv.includes('--record')) {
    mkdirSync('bench/results', { recursive: true });
    const at = new Date().toISOString();
    const file = `bench/results/${at.slice(0, 10)}-${at.slice(11, 13)}${at.slice(14, 16)}-data.md`;
    writeFileSync(file, text);
    log(`recorded ${file}`);
  }
}

main().catch((err) => {
  process.stderr.write(`bench:data failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
