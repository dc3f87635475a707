// `npm run bench:profile -- [--route get|list|post|webhooks|messages] [--baseline | --baseline-fastify] [--seconds 15] [--rate N] [--webhooks 5000] [--interval 1000] [--alloc [--survivors] [--no-inlining]] [--build dist/apps/api/src/main.js]`:
// the API under one route's load with V8's CPU profiler; prints self time per package and per function, and the
// bytes allocated per request (docs/internals/benchmarks.md, "Profiling a route").
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { GC_TRACE_FLAGS, GcSummary, GcTrace } from './lib/gc-trace';
import { measure, send, Target } from './lib/load';
import { drainRate } from './lib/pipeline';
import { cpuMs, freePort, pinLoadGenerator, sleep, startNode, TS_NODE, waitForHttp } from './lib/proc';
import { createAccount, DATABASE_URL, freshStores, seedPets, benchEnv } from './lib/setup';
import { argv, option } from './lib/argv';
import { queuePetCreated, webhookReceiver } from './lib/webhook-load';

pinLoadGenerator();

const ROUTE = option('--route', 'get');
const SECONDS = Number(option('--seconds', '15'));
const RATE = Number(option('--rate', '0')) || undefined;
const BUILD = option('--build', 'dist/apps/api/src/main.js');
/** Profile a baseline instead: the same I/O in bare Nest on Express (`--baseline`) or on Fastify (`--baseline-fastify`). */
const BASELINE_SERVER = argv.includes('--baseline-fastify')
  ? 'bench/servers/baseline-nest-fastify.ts'
  : argv.includes('--baseline')
    ? 'bench/servers/baseline-io.ts'
    : '';
const BASELINE = BASELINE_SERVER !== '';
/** Sample allocations (collected ones included) through the inspector instead of the CPU profiler. */
/** With --alloc: only what survived a scavenge (promoted to the old generation, collected there or not). */
const SURVIVORS = argv.includes('--survivors');
const ALLOC = argv.includes('--alloc') || SURVIVORS;
/** With --alloc: V8 inlines nothing, so each function's own allocations are counted as its (slower; totals move). */
const NO_INLINING = argv.includes('--no-inlining');
/** A full collection under load as the measured seconds start: runs then compare in the state a mark-compact leaves. */
const FULL_GC = argv.includes('--full-gc');
const INSPECT_PORT = 9339 + (process.pid % 500);
const WEBHOOKS = Number(option('--webhooks', '5000'));
/** The CPU profiler's sampling interval in µs (V8's default 1,000): 5,000 deliveries take ~1,300 samples at it. */
const CPU_PROF = ['--cpu-prof', `--cpu-prof-interval=${Number(option('--interval', '1000'))}`];
const tmp = mkdtempSync(join(tmpdir(), 'petstore-profile-'));
const log = (msg: string) => process.stderr.write(`[profile] ${msg}\n`);

// The sweep would re-enqueue the jobs the profile drops between phases.
const env = benchEnv({ SWEEP_INTERVAL_MS: String(24 * 3600 * 1000) });

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

/** `node_modules/<package>` (scoped included), node's own modules, or the build itself. */
function owner(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node';
  return url.includes('/dist/apps/') || url.includes('/dist/libs/') || url.includes('/bench/') ? 'our code' : url;
}

/** Our code by file (`messages.service`), everything else by package. */
function where(who: string, url: string): string {
  return who === 'our code' ? (/([^/]+)\.[jt]s$/.exec(url)?.[1] ?? who) : who;
}

/** Self time of the samples in the last `windowMs` of the profile (the measured seconds). */
function summarise(profile: CpuProfile, windowMs: number, requests: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const times: number[] = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) times.push((t += d));
  const from = t - windowMs * 1000;
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    if (times[i] < from) continue;
    const dt = (times[i + 1] ?? t) - times[i];
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    busy += us;
    const who = owner(url, functionName);
    byOwner.set(who, (byOwner.get(who) ?? 0) + us);
    const key = `${functionName || '(anonymous)'} ${where(who, url)}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const perReq = (us: number) => (us / requests).toFixed(1);
  const rows = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `| ${k} | ${perReq(us)} | ${((100 * us) / busy).toFixed(1)} % |`);
  return [
    `Busy (non-idle) samples: ${perReq(busy)} µs per request over ${requests} requests.`,
    '',
    '| package | µs/req | share |',
    '|---|---|---|',
    ...rows(byOwner, 25),
    '',
    '| function (self time) | µs/req | share |',
    '|---|---|---|',
    ...rows(byFunction, 50),
  ].join('\n');
}

interface SamplingNode {
  callFrame: ProfileNode['callFrame'];
  selfSize: number;
  children: SamplingNode[];
}

/** One inspector session on the API. */
class Inspector {
  private seq = 0;
  private readonly pending = new Map<number, (result: unknown) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.onmessage = (e) => {
      const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
      if (msg.id !== undefined) this.pending.get(msg.id)?.(msg.result);
    };
  }

  /** Retried while the process starts: a worker is connected to as it boots, before it takes jobs. */
  static async connect(port: number): Promise<Inspector> {
    const list = async (): Promise<{ webSocketDebuggerUrl: string }[]> => {
      for (let tries = 0; ; tries++) {
        try {
          return (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
            webSocketDebuggerUrl: string;
          }[];
        } catch (err) {
          if (tries >= 100) throw err;
          await sleep(50);
        }
      }
    };
    const [{ webSocketDebuggerUrl }] = await list();
    const ws = new WebSocket(webSocketDebuggerUrl);
    await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
    return new Inspector(ws);
  }

  call(method: string, params: object = {}): Promise<unknown> {
    const id = ++this.seq;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve) => this.pending.set(id, resolve));
  }

  close(): void {
    this.ws.close();
  }
}

/** V8's sampling heap profiler over the inspector protocol, counting objects the GC already collected. */
class AllocationSampling {
  private constructor(private readonly inspector: Inspector) {}

  static async start(inspector: Inspector): Promise<AllocationSampling> {
    await inspector.call('HeapProfiler.enable');
    await inspector.call('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !SURVIVORS,
    });
    return new AllocationSampling(inspector);
  }

  async stop(requests: number): Promise<string> {
    const { profile } = (await this.inspector.call('HeapProfiler.stopSampling')) as {
      profile: { head: SamplingNode };
    };
    const file = join(tmp, 'alloc.heapprofile');
    writeFileSync(file, JSON.stringify(profile));
    const byFunction = new Map<string, number>();
    const byOwner = new Map<string, number>();
    let total = 0;
    const walk = (n: SamplingNode) => {
      const { functionName, url, lineNumber } = n.callFrame;
      const who = owner(url, functionName);
      const key = `${functionName || '(anonymous)'} ${where(who, url)}${url ? `:${lineNumber + 1}` : ''}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + n.selfSize);
      byOwner.set(who, (byOwner.get(who) ?? 0) + n.selfSize);
      total += n.selfSize;
      n.children.forEach(walk);
    };
    walk(profile.head);
    const rows = (m: Map<string, number>, n: number) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(([k, bytes]) => `| ${k} | ${(bytes / requests).toFixed(0)} | ${((100 * bytes) / total).toFixed(1)} % |`);
    return [
      `Sampled: ${(total / 1024 / requests).toFixed(1)} KB per request over ${requests} requests.`,
      '',
      '| package | bytes/req | share |',
      '|---|---|---|',
      ...rows(byOwner, 20),
      '',
      '| function (allocating) | bytes/req | share |',
      '|---|---|---|',
      ...rows(byFunction, 50),
      '',
      `profile: ${file} (open in DevTools' Memory tab)`,
    ].join('\n');
  }
}

async function main(): Promise<void> {
  env.PORT = String(await freePort());
  await freshStores(env);
  const account = createAccount('profile', { ...env, LOG_LEVEL: 'error' });
  const pool = new Pool({ connectionString: DATABASE_URL, max: 2 });
  const pets = await seedPets(pool, account.accountId, 1_000, 1_000_000);
  await pool.end();
  if (ROUTE === 'webhooks') return profileWorker(account.apiKey);
  if (ROUTE === 'messages') return profileDrain(account.apiKey, account.accountId);
  const server = BASELINE ? [...TS_NODE, BASELINE_SERVER] : [BUILD];
  const proc = startNode(
    'api',
    [
      ...(ALLOC || FULL_GC ? [`--inspect=127.0.0.1:${INSPECT_PORT}`] : []),
      ...(ALLOC ? [] : [...CPU_PROF, `--cpu-prof-dir=${tmp}`]),
      ...(NO_INLINING ? ['--no-turbo-inlining'] : []),
      ...GC_TRACE_FLAGS,
      ...server,
    ],
    {
      ...env,
      BASELINE_ACCOUNT_ID: String(account.accountId),
    },
    tmp,
  );
  const url = `http://127.0.0.1:${env.PORT}`;
  await waitForHttp(`${url}${BASELINE ? '/ready' : '/health/ready'}`, proc);
  const v1 = BASELINE ? '' : '/v1';
  let i = 0;
  const auth = { Authorization: `Bearer ${account.apiKey}` };
  const targets: Record<string, Target> = {
    get: {
      url: `${url}${v1}/pets/${pets[0]}`,
      headers: auth,
      next: () => ({ path: `${v1}/pets/${pets[i++ % pets.length]}` }),
    },
    list: { url: `${url}${v1}/pets?limit=20`, headers: auth },
    post: {
      url: `${url}${v1}/messages`,
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'hello from the profile' }),
    },
  };
  const target = { ...targets[ROUTE], rate: RATE };
  const probe = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
  if (!probe.ok) throw new Error(`${ROUTE}: ${target.url} answered ${probe.status} ${await probe.text()}`);
  log(`warming up, then ${SECONDS} s of ${ROUTE}${RATE ? ` at ${RATE}/s` : ''}`);
  await measure(target, { connections: 50, warmupS: 0, durationS: 10 });
  const gc = new GcTrace(join(tmp, 'api.out'));
  const inspector = ALLOC || FULL_GC ? await Inspector.connect(INSPECT_PORT) : undefined;
  const sampling = ALLOC ? await AllocationSampling.start(inspector!) : undefined;
  // Promotion differs before and after the first mark-compact under load (docs/internals/decisions/0053-in-flight-responses-in-slots.md).
  const fullGc = FULL_GC ? sleep(1_000).then(() => inspector!.call('HeapProfiler.collectGarbage')) : undefined;
  const m = await measure(target, { connections: 50, warmupS: 0, durationS: SECONDS, pid: proc.pid, gc });
  await fullGc;
  const allocations = await sampling?.stop(m.total);
  inspector?.close();
  await proc.stop();
  if (allocations) {
    process.stdout.write(
      `## ${ROUTE}: ${((m.gc?.allocatedBytes ?? NaN) / 1024 / m.total).toFixed(1)} KB allocated/req, ${promotedPerScavenge(m.gc)}\n\n${allocations}\n`,
    );
    return;
  }
  const pauses = m.gc?.pausesMs ?? [];
  report(
    `${ROUTE}: ${Math.round(m.rps)} req/s, p99 ${m.p99.toFixed(1)} ms, ${Math.round(m.cpuUsPerReq)} µs CPU/req, ` +
      `${((m.gc?.allocatedBytes ?? NaN) / 1024 / m.total).toFixed(1)} KB allocated/req, ` +
      `${pauses.length} GCs (longest ${Math.max(0, ...pauses).toFixed(1)} ms), ${promotedPerScavenge(m.gc)}, ${m.failures} failed`,
    SECONDS * 1000,
    m.total,
  );
}

/** What outlived two scavenges, per scavenge: retention that the sampled shares do not show (docs/internals/decisions/0053-in-flight-responses-in-slots.md). */
function promotedPerScavenge(gc: GcSummary | undefined): string {
  return gc
    ? `${Math.round(gc.promotedBytes / 1024 / Math.max(1, gc.scavenges))} KB promoted per scavenge (${gc.scavenges})`
    : '';
}

function report(title: string, windowMs: number, units: number): void {
  const file = readdirSync(tmp).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile in ${tmp}`);
  const profile = JSON.parse(readFileSync(join(tmp, file), 'utf8')) as CpuProfile;
  process.stdout.write(
    [`## ${title}`, '', summarise(profile, windowMs, units), '', `profile: ${join(tmp, file)}`, ''].join('\n'),
  );
}

/** The worker's heap allocation and collections per unit of work, from its GC trace. */
function allocatedPer(gc: GcSummary, units: number): string {
  const pauseMs = gc.pausesMs.reduce((a, b) => a + b, 0);
  return `${(gc.allocatedBytes / 1024 / units).toFixed(1)} KB allocated and ${((pauseMs * 1000) / units).toFixed(1)} µs of GC pauses (${gc.pausesMs.length} GCs)`;
}

/** The worker, with the CPU profiler (or with --alloc the inspector), on the core the API had. */
async function startProfiledWorker() {
  return startNode(
    'worker',
    [
      ...(ALLOC ? [`--inspect=127.0.0.1:${INSPECT_PORT}`] : [...CPU_PROF, `--cpu-prof-dir=${tmp}`]),
      ...GC_TRACE_FLAGS,
      BUILD.replace('/api/', '/worker/'),
    ],
    { ...env, ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WORKER_PORT: String(await freePort()) },
    tmp,
  );
}

/** WEBHOOKS messages accepted with the worker stopped, then processed by one profiled worker. */
async function profileDrain(apiKey: string, accountId: number): Promise<void> {
  const api = startNode('api', [BUILD], env, tmp);
  const url = `http://127.0.0.1:${env.PORT}`;
  await waitForHttp(`${url}/health/ready`, api);
  log(`accepting ${WEBHOOKS} messages, worker stopped`);
  const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
  await send(
    { url: `${url}/v1/messages`, method: 'POST', headers, body: JSON.stringify({ message: 'drain' }) },
    WEBHOOKS,
  );
  await api.stop();
  const pool = new Pool({ connectionString: DATABASE_URL, max: 1 });
  const open = async () =>
    Number(
      (
        await pool.query(
          `SELECT count(*) AS n FROM messages WHERE account_id = $1 AND status IN ('queued', 'processing')`,
          [accountId],
        )
      ).rows[0].n,
    );
  const worker = await startProfiledWorker();
  const inspector = ALLOC ? await Inspector.connect(INSPECT_PORT) : undefined;
  const sampling = inspector && (await AllocationSampling.start(inspector));
  const gc = new GcTrace(join(tmp, 'worker.out'));
  gc.mark();
  const cpu0 = cpuMs(worker.pid);
  const rate = await drainRate(open, WEBHOOKS);
  const cpu = cpuMs(worker.pid) - cpu0;
  const allocated = allocatedPer(await gc.since(), WEBHOOKS);
  const allocations = await sampling?.stop(WEBHOOKS);
  inspector?.close();
  await worker.stop();
  await pool.end();
  if (allocations) {
    process.stdout.write(`## messages: ${allocated} per message\n\n${allocations}\n`);
    return;
  }
  report(
    `messages: ${WEBHOOKS} drained at ${Math.round(rate.perS)}/s, worker CPU ${Math.round((cpu * 1000) / WEBHOOKS)} µs per message (boot included), ${allocated} per message`,
    rate.seconds * 1000,
    WEBHOOKS,
  );
}

/** WEBHOOKS pet.created events queued with the worker stopped, then delivered by one profiled worker. */
async function profileWorker(apiKey: string): Promise<void> {
  const api = startNode('api', [BUILD], { ...env, ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }, tmp);
  const url = `http://127.0.0.1:${env.PORT}`;
  await waitForHttp(`${url}/health/ready`, api);
  const receiver = await webhookReceiver();
  const { times } = receiver;
  log(`queueing ${WEBHOOKS} pet.created events, worker stopped`);
  await queuePetCreated(url, apiKey, receiver.url, WEBHOOKS);
  await api.stop();
  const worker = await startProfiledWorker();
  const inspector = ALLOC ? await Inspector.connect(INSPECT_PORT) : undefined;
  const sampling = inspector && (await AllocationSampling.start(inspector));
  const gc = new GcTrace(join(tmp, 'worker.out'));
  gc.mark();
  const started = performance.now();
  const cpu0 = cpuMs(worker.pid);
  while (times.length < WEBHOOKS && performance.now() - started < 300_000) await sleep(20);
  const cpu = cpuMs(worker.pid) - cpu0;
  const allocated = allocatedPer(await gc.since(), times.length);
  const allocations = await sampling?.stop(times.length);
  inspector?.close();
  if (allocations) {
    await worker.stop();
    receiver.server.close();
    process.stdout.write(`## webhooks: ${allocated} per delivery\n\n${allocations}\n`);
    return;
  }
  const windowMs = times[times.length - 1] - times[0];
  await worker.stop();
  receiver.server.close();
  report(
    `webhooks: ${times.length} of ${WEBHOOKS} delivered, ${Math.round((times.length - 1) / (windowMs / 1000))}/s ` +
      `(first to last), worker CPU ${Math.round((cpu * 1000) / times.length)} µs per delivery (boot included), ${allocated} per delivery`,
    windowMs,
    times.length,
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`profile failed: ${err.stack ?? err.message}\nlogs in ${tmp}\n`);
    process.exit(1);
  },
);
