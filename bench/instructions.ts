// `npm run bench:instructions [-- build.js ...] [--warmup N] [--only 'GET /v1/pets/{id}' ...]`: user-space
// instructions per request of the hot routes under callgrind (docs/internals/benchmarks.md, "Instructions, not seconds").
// `--webhooks N [--webhook-warmup W] [--checkout dir ...] [--node-flag=...]`: instead, per delivery of one worker (each
// checkout's build) delivering W + N queued pet.created events to a loopback receiver, the last N counted.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { send, Target } from './lib/load';
import {
  APP_NODE_OPTIONS,
  freePort,
  HAS_TASKSET,
  SERVER_CORE,
  sleep,
  startNode,
  TS_NODE,
  waitForHttp,
} from './lib/proc';
import { createAccount, DATABASE_URL, freshStores, seedPets, benchEnv } from './lib/setup';
import { argv, option } from './lib/argv';
import { queuePetCreated, webhookReceiver } from './lib/webhook-load';

// V8 on Node 24 (Maglev, then TurboFan) is still compiling our route after 3,000 requests: a count
// taken then includes that compile work (docs/internals/benchmarks.md).
const WARMUP = Number(option('--warmup', '20000'));
const COUNTED = 2_000;
// Another session's count may hold the default: its API would answer this one's requests.
const PORT = Number(process.env.BENCH_INSTRUCTIONS_PORT || 3950);

/** Connections while counting: 50 unless a row says otherwise. */
type Route = [string, Target, number?];

const builds = argv.filter((a) => a.endsWith('.js'));
const ONLY = argv.flatMap((a, i) => (argv[i - 1] === '--only' ? [a] : []));
const WEBHOOKS = Number(option('--webhooks', '0'));
/** Deliveries made before counting starts: the worker's JIT and heap settle (0: counted cold, from readiness). */
const WEBHOOK_WARMUP = Number(option('--webhook-warmup', '0'));
const CHECKOUTS = argv.flatMap((a, i) => (argv[i - 1] === '--checkout' ? [a] : []));
/** Extra node flags for the counted worker (`--node-flag=--no-memory-reducer`): V8's timers see valgrind's slowness. */
const NODE_FLAGS = argv.filter((a) => a.startsWith('--node-flag=')).map((a) => a.slice('--node-flag='.length));
if (!builds.length) builds.push('dist/apps/api/src/main.js');

const env = benchEnv({ PORT: String(PORT) });
const tmp = mkdtempSync(join(tmpdir(), 'petstore-instructions-'));
const log = (msg: string) => process.stderr.write(`[instructions] ${msg}\n`);

function callgrindControl(pid: number, flag: string): void {
  execFileSync('callgrind_control', [flag, String(pid)], { stdio: 'ignore' });
}

/** Its `summary:` can wrap around after a dump. */
function newestTotal(prefix: string): number {
  const files = readdirSync(tmp)
    .filter((f) => f.startsWith(prefix))
    .map((f) => join(tmp, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const text = readFileSync(files[0], 'utf8');
  const line = /^totals:\s+(\d+)/m.exec(text);
  if (!line) throw new Error(`no totals in ${files[0]}`);
  return Number(line[1]);
}

async function waitLive(url: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(1_000);
  }
  throw new Error(`API not live at ${url}`);
}

/** `node ...nodeArgs` under callgrind, counting nothing until told; taskset execs valgrind in place, so the pid is
 * the one callgrind_control addresses. */
function underCallgrind(prefix: string, nodeArgs: string[], childEnv: NodeJS.ProcessEnv): ChildProcess {
  const valgrind = [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${join(tmp, `${prefix}.%p`)}`,
    process.execPath,
    ...nodeArgs,
  ];
  const [cmd, ...args] = HAS_TASKSET ? ['taskset', '-c', String(SERVER_CORE), ...valgrind] : valgrind;
  return spawn(cmd, args, { env: childEnv, stdio: 'ignore' });
}

/** Counts each route's instructions in one server process started as `node ...nodeArgs`. */
async function measureServer(
  label: string,
  prefix: string,
  nodeArgs: string[],
  livePath: string,
  routes: Route[],
): Promise<Map<string, number>> {
  const child = underCallgrind(prefix, nodeArgs, { ...process.env, ...env });
  const pid = child.pid as number;
  try {
    await waitLive(`http://127.0.0.1:${PORT}${livePath}`);
    const counts = new Map<string, number>();
    for (const [name, target, connections = 50] of routes) {
      log(`${label}: ${name}`);
      await send(target, WARMUP, 10);
      callgrindControl(pid, '--instr=on');
      // Switching instrumentation on stalls the API long enough for some 408s: a second warm-up
      // under instrumentation absorbs that, neither checked nor counted.
      await send(target, 100, 50, 60).catch(() => undefined);
      callgrindControl(pid, '-d'); // a dump resets the counters: the next one holds only what follows
      // Under instrumentation the API runs ~50x slower: allow each answer a minute.
      await send(target, COUNTED, connections, 60);
      callgrindControl(pid, '--instr=off');
      callgrindControl(pid, '-d');
      await sleep(500);
      counts.set(name, newestTotal(prefix) / COUNTED);
    }
    return counts;
  } finally {
    child.kill('SIGKILL');
  }
}

/** Instructions per delivery of `checkout`'s worker: WEBHOOK_WARMUP + WEBHOOKS events queued (worker stopped), delivered. */
async function countWebhooks(checkout: string, prefix: string): Promise<{ perDelivery: number; counted: number }> {
  await freshStores(env);
  const account = createAccount('bench-instructions', { ...env, LOG_LEVEL: 'error' });
  const hookEnv = { ...env, ALLOW_PRIVATE_WEBHOOK_URLS: 'true', SWEEP_INTERVAL_MS: String(24 * 3600 * 1000) };
  const api = startNode('api', ['dist/apps/api/src/main.js'], hookEnv, tmp);
  const url = `http://127.0.0.1:${PORT}`;
  await waitForHttp(`${url}/health/ready`, api);
  const receiver = await webhookReceiver();
  const { times } = receiver;
  const total = WEBHOOK_WARMUP + WEBHOOKS;
  await queuePetCreated(url, account.apiKey, receiver.url, total);
  await api.stop();
  const workerPort = await freePort();
  const child = underCallgrind(prefix, [...NODE_FLAGS, `${checkout}/dist/apps/worker/src/main.js`], {
    ...process.env,
    NODE_OPTIONS: APP_NODE_OPTIONS,
    ...hookEnv,
    WORKER_PORT: String(workerPort),
  });
  const pid = child.pid as number;
  try {
    // Booting under valgrind on a loaded machine has taken over five minutes.
    await waitLive(`http://127.0.0.1:${workerPort}/health/ready`, 1_200_000);
    const deadline = Date.now() + 1_800_000;
    while (times.length < WEBHOOK_WARMUP && Date.now() < deadline) await sleep(50);
    callgrindControl(pid, '--instr=on');
    const first = times.length;
    log(`${checkout}: counting from delivery ${first}`);
    while (times.length < total && Date.now() < deadline) await sleep(200);
    callgrindControl(pid, '--instr=off');
    callgrindControl(pid, '-d');
    await sleep(500);
    const counted = times.length - first;
    return { perDelivery: newestTotal(prefix) / counted, counted };
  } finally {
    child.kill('SIGKILL');
    receiver.server.close();
  }
}

async function webhooksMain(): Promise<void> {
  const checkouts = CHECKOUTS.length ? CHECKOUTS : ['.'];
  const rows: string[] = [];
  for (const [k, checkout] of checkouts.entries()) {
    const { perDelivery, counted } = await countWebhooks(checkout, `cg-hooks-${k}`);
    rows.push(`| ${checkout} | ${(perDelivery / 1e6).toFixed(3)} M | ${counted} |`);
  }
  process.stdout.write(
    [
      `Worker instructions per webhook delivery (callgrind, user space), ${WEBHOOKS} pet.created events counted` +
        ` after ${WEBHOOK_WARMUP} delivered` +
        `${NODE_FLAGS.length ? ` (node ${NODE_FLAGS.join(' ')})` : ''}:`,
      '',
      '| checkout | instructions per delivery | deliveries counted |',
      '|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  if (WEBHOOKS) return webhooksMain();
  await freshStores(env);
  const account = createAccount('bench-instructions', { ...env, LOG_LEVEL: 'error' });
  const pool = new Pool({ connectionString: DATABASE_URL });
  const pets = await seedPets(pool, account.accountId, 1_000, 1_000_000_000);
  await pool.end();
  const url = `http://127.0.0.1:${PORT}`;
  const auth = { Authorization: `Bearer ${account.apiKey}` };
  const json = { ...auth, 'Content-Type': 'application/json' };
  let i = 0;
  const nextPet = () => pets[i++ % pets.length];
  const allRoutes: Route[] = [
    [
      'GET /v1/pets/{id}',
      { url: `${url}/v1/pets/${pets[0]}`, headers: auth, next: () => ({ path: `/v1/pets/${nextPet()}` }) },
    ],
    ['GET /v1/pets?limit=20', { url: `${url}/v1/pets?limit=20`, headers: auth }],
    [
      'POST /v1/messages',
      {
        url: `${url}/v1/messages`,
        method: 'POST',
        headers: json,
        body: JSON.stringify({ message: 'hello from the bench' }),
      },
    ],
    [
      'POST /v1/store/orders',
      {
        url: `${url}/v1/store/orders`,
        method: 'POST',
        headers: json,
        next: () => ({ body: JSON.stringify({ petId: nextPet() }) }),
      },
      // Fewer at once: 50 transactions holding row locks in a process slowed ~50x by valgrind
      // run into the API's database timeouts, which a real run never sees.
      10,
    ],
  ];
  const routes = allRoutes.filter(([name]) => !ONLY.length || ONLY.includes(name));

  const results: Map<string, number>[] = [];
  for (const [k, build] of builds.entries())
    results.push(await measureServer(build, `cg-${k}`, [build], '/health/live', routes));
  // The baselines of `npm run bench` (bench/servers), counted the same way: the floor a route of ours stands on.
  const fixed: Route[] = [['fixed', { url: `${url}/fixed` }]];
  const baselines = [
    ['Baseline A: node:http, fixed JSON', 'bench/servers/baseline-http.ts'],
    ['Baseline B: bare NestJS (Express), one route', 'bench/servers/baseline-nest.ts'],
  ].map(([label, file], k) => ({ label, file, prefix: `cg-base-${k}` }));
  const baselineCounts: [string, number][] = [];
  for (const b of baselines) {
    const counts = await measureServer(b.label, b.prefix, [...TS_NODE, b.file], '/fixed', fixed);
    baselineCounts.push([b.label, counts.get('fixed') as number]);
  }

  const head = `| Route | ${builds.map((b, k) => (k ? `${b} | × first` : b)).join(' | ')} |`;
  const rule = `|---|${builds.map((_, k) => (k ? '---|---|' : '---|')).join('')}`;
  const rows = routes.map(([name]) => {
    const first = results[0].get(name) as number;
    const cells = results.map((r, k) => {
      const n = r.get(name) as number;
      const count = `${(n / 1e6).toFixed(3)} M`;
      return k ? `${count} | ${(n / first).toFixed(2)}` : count;
    });
    return `| ${name} | ${cells.join(' | ')} |`;
  });
  const bareNest = baselineCounts[1][1];
  const md = [
    `Instructions per request (callgrind, user space), ${COUNTED} requests after ${WARMUP} warm-up, one API process:`,
    '',
    head,
    rule,
    ...rows,
    '',
    `The baselines, counted the same way (${builds[0]} against bare Nest: its instructions over ours, as the bench's ratios read):`,
    '',
    '| Server | instructions per request | bare Nest / it |',
    '|---|---|---|',
    ...baselineCounts.map(([label, n]) => `| ${label} | ${(n / 1e6).toFixed(3)} M | ${(bareNest / n).toFixed(2)} |`),
    ...routes.map(([name]) => {
      const n = results[0].get(name) as number;
      return `| ${name} | ${(n / 1e6).toFixed(3)} M | ${(bareNest / n).toFixed(2)} |`;
    }),
    '',
  ].join('\n');
  process.stdout.write(md);
  writeFileSync('bench/results/instructions-latest.md', md);
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench:instructions failed: ${err.message}\n`);
    process.exit(1);
  },
);
