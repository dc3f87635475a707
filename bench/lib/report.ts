import { Measurement } from './load';
import { medianRound, pairedRatio, PairedRatio, Rounds } from './paired';
import type { StreamRows } from './streams';

export interface Report {
  started: Date;
  machine: {
    cpus: number;
    cpuModel: string;
    node: string;
    taskset: boolean;
    pool: number;
    logLevel: string;
    commit: string;
    quick: boolean;
    durationS: number;
    warmupS: number;
    connections: number;
  };
  rows: ({ name: string; m: Measurement } | { name: string; missing: string })[];
}

export type GateRounds = Rounds<'none' | 'auth' | 'gate'>;
export type GetVsBaselineRounds = Rounds<'baselineB' | 'get'>;
export type PostAtRateRounds = Rounds<'baselineB' | 'post'> & { rate: number };
/** Tracing off, every trace exported to a local sink, a sample exported. */
export interface TracingRounds {
  rounds: Rounds<'off' | 'on' | 'sampled'>;
  sampledRatio: number;
  /** Warm-ups included; and the requests the traced API answered while measured. */
  spans: number;
  requests: number;
}
export interface CatalogRows {
  pets: number;
  deepRow: number;
  first: Measurement;
  deep: Measurement;
  plans: string[];
}
export interface ContentionRows {
  hot: Measurement;
  spread: Measurement;
}
export interface MessagesRows {
  api: Measurement;
  plain: { rps: number; p50: number; p99: number };
}
export interface SoakRows {
  m: Measurement;
  samples: { t: number; mb: number }[];
}
export interface WebhookRows {
  queued: number;
  delivered: number;
  perS: number;
  workerCpuUsPerDelivery: number;
}

const GATE_LABELS = {
  none: 'nothing',
  auth: "auth alone (the gate's key check; no limiter, no rate-limit headers)",
  gate: 'auth + limiter (the real gate)',
};

const n0 = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
const n1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
const n2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');
const ratio = (a: number, b: number) => n2(a / b);
const failedInAll = (rounds: Measurement[]) => n0(rounds.reduce((sum, m) => sum + m.failures, 0));
const paired = (r: PairedRatio) => `${n2(r.median)} (${n2(r.min)}–${n2(r.max)})`;

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** Each contender's median round: req/s, latency, CPU; failures summed over all rounds. */
function medianRoundsTable(rows: [string, Measurement[]][]): string {
  return table(
    ['', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'failed'],
    rows.map(([label, rounds]) => {
      const mid = medianRound(rounds);
      return [label, n0(mid.rps), n1(mid.p50), n1(mid.p99), n0(mid.cpuUsPerReq), failedInAll(rounds)];
    }),
  );
}

export function renderReport(
  r: Report,
  s: {
    gate: GateRounds;
    getVsBaseline?: GetVsBaselineRounds;
    postAtRate?: PostAtRateRounds;
    tracing?: TracingRounds;
    catalog: CatalogRows;
    contention: ContentionRows;
    messages?: MessagesRows;
    drain?: { perS: number; seconds: number; queued: number };
    webhooks: WebhookRows;
    soak?: SoakRows;
  },
): string {
  const m = r.machine;
  const baselineB = r.rows.find((x) => x.name.startsWith('Baseline B') && 'm' in x) as { m: Measurement } | undefined;
  const out: string[] = [];
  out.push(`# Benchmark ${r.started.toISOString().slice(0, 16).replace('T', ' ')} UTC${m.quick ? ' (quick run)' : ''}`);
  out.push(
    `Machine: ${m.cpus} cores (${m.cpuModel}), Node ${m.node}; server on core 0 and load generator on core 1: ${
      m.taskset ? 'yes (taskset)' : 'no (taskset missing)'
    }. Postgres and Redis are shared and unpinned. Commit ${m.commit}; DATABASE_POOL_SIZE=${m.pool}; LOG_LEVEL=${m.logLevel} to a file. ` +
      `autocannon, ${m.connections} connections, ${m.warmupS} s warm-up then ${m.durationS} s per row. One API process.`,
  );
  out.push(
    table(
      ['Row', 'req/s', 'p50 ms', 'p99 ms', 'peak RSS MB', '× baseline B', 'server CPU µs/req', 'failed'],
      r.rows.map((x) =>
        'm' in x
          ? [
              x.name,
              n0(x.m.rps),
              n1(x.m.p50),
              n1(x.m.p99),
              n0(x.m.peakRssMb),
              baselineB ? ratio(x.m.rps, baselineB.m.rps) : 'n/a',
              n0(x.m.cpuUsPerReq),
              String(x.m.failures),
            ]
          : [x.name, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', x.missing],
      ),
    ),
  );
  out.push(
    'req/s counts 2xx answers only; "failed" counts non-2xx answers, socket errors and timeouts; peak RSS is the ' +
      'highest VmRSS of the server process sampled every 100 ms during the row (baselines: their own process, under ts-node); ' +
      'server CPU µs/req is the user + system CPU time of the server process during the row divided by the requests it answered: ' +
      'on a machine shared with other work it is steadier than req/s, which depends on the share of the core the server gets.',
  );

  const g = s.gate;
  const rounds = g.none.length;
  out.push('## Auth and limiter cost (trivial route, same bench app, real RequestGateMiddleware)');
  out.push(
    `${rounds} paired round(s): each round measures the three modes back to back, in an order rotated by the round, ` +
      'and the ratios are the median (and range) of the per-round ratios to that round\'s "nothing", so the VM\'s drift ' +
      "between rounds cancels out. req/s, latency and CPU columns are each mode's median round; failed sums all rounds.",
  );
  out.push(
    table(
      ['In front of the route', 'req/s', 'p50 ms', 'p99 ms', '× no gate', 'CPU µs/req', '× no gate (by CPU)', 'failed'],
      (['none', 'auth', 'gate'] as const).map((k) => {
        const mid = medianRound(g[k]);
        return [
          GATE_LABELS[k],
          n0(mid.rps),
          n1(mid.p50),
          n1(mid.p99),
          paired(pairedRatio(g[k], g.none, 'rps')),
          n0(mid.cpuUsPerReq),
          paired(pairedRatio(g[k], g.none, 'cpu')),
          failedInAll(g[k]),
        ];
      }),
    ),
  );
  const [auth, gate] = [medianRound(g.auth), medianRound(g.gate)];
  out.push(
    `Targets: auth ≥ 0.9 × no gate, auth + limiter ≥ 0.8 (the CPU column is the same ratio measured as the inverse of the server's CPU time per request). The limiter adds ${n1(gate.p50 - auth.p50)} ms at p50 and ${n1(
      gate.p99 - auth.p99,
    )} ms at p99 (its Redis round trip: one script call per account and event-loop turn).`,
  );

  if (s.getVsBaseline) {
    const v = s.getVsBaseline;
    out.push('## GET /v1/pets/{id} against baseline B, paired rounds');
    out.push(
      `The main table measures each row once, minutes apart. Here the two alternate in ${v.get.length} paired rounds ` +
        '(same method as the gate section), so the ratio does not depend on how fast the VM was at each moment.',
    );
    out.push(
      medianRoundsTable([
        ['Baseline B', v.baselineB],
        ['GET /v1/pets/{id}', v.get],
      ]),
    );
    out.push(
      `GET / baseline B: ${paired(pairedRatio(v.get, v.baselineB, 'rps'))} by req/s, ${paired(
        pairedRatio(v.get, v.baselineB, 'cpu'),
      )} by CPU time per request (median of rounds, range in brackets). Target ≥ 0.7.`,
    );
  }

  if (s.postAtRate) out.push(renderPostAtRate(s.postAtRate));

  if (s.tracing) out.push(renderTracing(s.tracing));

  const c = s.catalog;
  out.push(`## Catalog depth (${n0(c.pets)} pets in one account, GET /v1/pets?limit=100)`);
  out.push(
    table(
      ['Page', 'req/s', 'p50 ms', 'p99 ms'],
      [
        ['first', n0(c.first.rps), n1(c.first.p50), n1(c.first.p99)],
        [`${n0(c.deepRow)} rows deep (after=)`, n0(c.deep.rps), n1(c.deep.p50), n1(c.deep.p99)],
      ],
    ),
  );
  out.push(
    `Cost of the deep page relative to the first: ${ratio(c.first.rps, c.deep.rps)}× (by throughput), ${ratio(
      c.deep.p50,
      c.first.p50,
    )}× (by p50); target ≤ 1.5×. Plans (first, deep):`,
  );
  out.push(c.plans.map((p) => '```\n' + p + '\n```').join('\n'));

  const k = s.contention;
  out.push('## Orders: one hot pet vs 1,000 pets (POST /v1/store/orders)');
  out.push(
    table(
      ['Pets', 'orders/s', 'p50 ms', 'p99 ms'],
      [
        ['one (every order locks the same row)', n0(k.hot.rps), n1(k.hot.p50), n1(k.hot.p99)],
        ['1,000 (spread)', n0(k.spread.rps), n1(k.spread.p50), n1(k.spread.p99)],
      ],
    ),
  );
  out.push(
    `Hot / spread: ${ratio(k.hot.rps, k.spread.rps)}× the throughput, ${ratio(k.hot.p99, k.spread.p99)}× the p99.`,
  );

  out.push('## Messages');
  if (s.messages) {
    const x = s.messages;
    out.push(
      table(
        ['Path', 'accepted/s', 'p50 ms', 'p99 ms'],
        [
          ['POST /v1/messages (202 after commit)', n0(x.api.rps), n1(x.api.p50), n1(x.api.p99)],
          [
            `plain Postgres from a script (message + outbox row per transaction, pool ${m.pool}, ${m.connections} loops)`,
            n0(x.plain.rps),
            n1(x.plain.p50),
            n1(x.plain.p99),
          ],
        ],
      ),
    );
    out.push(
      `API / plain Postgres: ${ratio(x.api.rps, x.plain.rps)}× the throughput. Targets: ≥ 2,000 accepted/s, p99 ≤ 50 ms.`,
    );
  } else {
    out.push('POST /v1/messages is not on this branch yet: no figures.');
  }
  if (s.drain)
    out.push(
      `Worker drain: ${n0(s.drain.queued)} queued messages to none in ${n1(s.drain.seconds)} s: **${n0(s.drain.perS)} messages/s** (one worker process).`,
    );

  out.push(renderWebhooks(s.webhooks));

  if (s.soak) {
    const smp = s.soak.samples;
    const at = (f: number) => smp[Math.min(smp.length - 1, Math.floor(smp.length * f))]?.mb ?? NaN;
    out.push(`## Memory over ${smp.length} s of mixed load (GET pet, POST order${s.messages ? ', POST message' : ''})`);
    out.push(
      table(
        ['start', 'middle', 'end', 'peak', 'req/s', 'p99 ms', 'failed'],
        [
          [
            n0(at(0.05)),
            n0(at(0.5)),
            n0(at(0.99)),
            n0(s.soak.m.peakRssMb),
            n0(s.soak.m.rps),
            n1(s.soak.m.p99),
            String(s.soak.m.failures),
          ].map(String),
        ],
      ),
    );
    out.push(`API RSS in MB. Growth from the middle to the end: ${n1(at(0.99) - at(0.5))} MB.`);
  }
  return out.join('\n\n') + '\n';
}

export type AgainstRows = { row: string; rounds: Rounds<'this' | 'other'> }[];

/** Paired rounds, by req/s and by CPU time per request. */
export function renderAgainst(other: string, rows: AgainstRows): string {
  return [
    `## This build against ${other}, paired rounds`,
    'Two API processes on the server core, one per build, on the same Postgres and Redis; each row alternates ' +
      `them in ${rows[0]?.rounds.this.length ?? 0} paired rounds. Ratios are this / other: above 1 is faster.`,
    table(
      ['Row', 'this req/s', 'other req/s', 'this CPU µs/req', 'other CPU µs/req', '× by req/s', '× by CPU', 'failed'],
      rows.map(({ row, rounds }) => {
        const ours = medianRound(rounds.this);
        const theirs = medianRound(rounds.other);
        return [
          row,
          n0(ours.rps),
          n0(theirs.rps),
          n0(ours.cpuUsPerReq),
          n0(theirs.cpuUsPerReq),
          paired(pairedRatio(rounds.this, rounds.other, 'rps')),
          paired(pairedRatio(rounds.this, rounds.other, 'cpu')),
          failedInAll([...rounds.this, ...rounds.other]),
        ];
      }),
    ),
  ].join('\n\n');
}

export function renderPostAtRate(v: PostAtRateRounds): string {
  const ratios = v.post.map((m, i) => m.p99 / v.baselineB[i].p99).sort((a, b) => a - b);
  const mid = ratios[Math.floor(ratios.length / 2)];
  const ms = (n: number) => n.toFixed(2);
  return [
    `## POST /v1/messages at ${n0(v.rate)}/s against baseline B's POST, paired rounds`,
    '',
    `Both at a steady ${n0(v.rate)} requests/s, evenly spaced and timed from when each was due (bench/lib/paced.ts), ` +
      `alternating in ${v.post.length} paired rounds; baseline B's POST /fixed parses the same JSON body and answers 202.`,
    '',
    '| round | baseline B p50 ms | baseline B p99 ms | POST p50 ms | POST p99 ms | p99 ratio |',
    '|---|---|---|---|---|---|',
    ...v.post.map(
      (m, i) =>
        `| ${i + 1} | ${ms(v.baselineB[i].p50)} | ${ms(v.baselineB[i].p99)} | ${ms(m.p50)} | ${ms(m.p99)} | ${(m.p99 / v.baselineB[i].p99).toFixed(2)} |`,
    ),
    '',
    `p99 of POST /v1/messages over baseline B's: ${mid.toFixed(2)}× (${ratios[0].toFixed(2)}–${ratios[ratios.length - 1].toFixed(2)}; ` +
      `median of rounds). Target ≤ 2×. Server CPU per request, median round: baseline B ${n0(medianRound(v.baselineB).cpuUsPerReq)} µs, ` +
      `POST ${n0(medianRound(v.post).cpuUsPerReq)} µs.`,
    '',
  ].join('\n');
}

export function renderTracing(t: TracingRounds): string {
  const { off, on, sampled } = t.rounds;
  const label = { off: 'off', on: 'on (every trace)', sampled: `on, OTEL_TRACES_SAMPLER_ARG=${t.sampledRatio}` };
  return [
    '## Tracing cost: GET /v1/pets/{id}, tracing off against on, paired rounds',
    `Three API processes on the server core: one without OTEL_EXPORTER_OTLP_ENDPOINT, two exporting to a local ` +
      `OTLP/HTTP sink (in the load generator's process), one of them recording ${t.sampledRatio} of the traces; ` +
      `alternating in ${off.length} paired rounds.`,
    table(
      ['Tracing', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'failed'],
      (['off', 'on', 'sampled'] as const).map((k) => {
        const mid = medianRound(t.rounds[k]);
        return [label[k], n0(mid.rps), n1(mid.p50), n1(mid.p99), n0(mid.cpuUsPerReq), failedInAll(t.rounds[k])];
      }),
    ),
    `on / off: ${paired(pairedRatio(on, off, 'rps'))} by req/s, ${paired(pairedRatio(on, off, 'cpu'))} by CPU time ` +
      `per request; sampled / off: ${paired(pairedRatio(sampled, off, 'rps'))} by req/s, ${paired(
        pairedRatio(sampled, off, 'cpu'),
      )} by CPU (median of rounds, range in brackets). The sink received ${n0(t.spans)} spans from the API tracing ` +
      `every request (warm-ups included; one server span per request) for ${n0(t.requests)} requests measured.`,
  ].join('\n\n');
}

export function renderWebhooks(w: WebhookRows): string {
  return [
    '## Webhooks',
    '',
    `${n0(w.delivered)} of ${n0(w.queued)} queued pet.created events delivered to a local receiver by one worker process: **${n0(
      w.perS,
    )} deliveries/s** (first to last delivery; fan-out included); worker CPU ${n0(
      w.workerCpuUsPerDelivery,
    )} µs per delivery.`,
  ].join('\n');
}

/** Issue 46's goal: event-to-client p99 at most this, with 1,000 streams and 500 events/s. */
const STREAM_P99_GOAL_MS = 250;

export function renderStreams(r: StreamRows): string {
  const perStreamKb = ((r.rssOpenMb - r.rssBeforeMb) * 1024) / r.streams;
  return [
    '## Event streams',
    '',
    table(
      ['streams', 'accounts', 'events/s', 'events', 'received / expected', 'p50 ms', 'p99 ms', 'max ms', 'POST failed'],
      [
        [
          n0(r.streams),
          n0(r.accounts),
          n0(r.rate),
          n0(r.events),
          `${n0(r.received)} / ${n0(r.expected)}`,
          n1(r.p50),
          n1(r.p99),
          n1(r.max),
          String(r.postFailures),
        ],
      ],
    ),
    '',
    `GET /v1/events/stream?type=pet.created, ${n0(r.streams / r.accounts)} per account (one Enterprise key's limit); POST /v1/pets paced over the accounts in turn for ${r.durationS} s, so each event reaches its account's streams. Event-to-client: receipt minus the event's createdAt (goal p99 ≤ ${STREAM_P99_GOAL_MS} ms: ${r.p99 <= STREAM_P99_GOAL_MS ? 'met' : 'not met'}). API RSS ${n1(r.rssBeforeMb)} MB before, ${n1(r.rssOpenMb)} MB with the streams open (**${n1(perStreamKb)} KB per stream**), ${n1(r.rssAfterMb)} MB after the events.`,
  ].join('\n');
}

export type SweepRows = { workers: number; lost: number; seconds: number; left: number }[];

export function renderSweep(rows: SweepRows): string {
  return [
    '## Lost-job sweep: recovering a large loss',
    '',
    'Messages accepted a minute ago whose jobs are not in Redis, given back by the sweep (SWEEP_INTERVAL_MS=1000) and processed, from the first worker start to none left open. Workers not pinned to a core; Postgres and Redis on the same two cores.',
    '',
    '| workers | lost messages | seconds | messages/s | left open |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.workers} | ${n0(r.lost)} | ${n1(r.seconds)} | ${n0((r.lost - r.left) / r.seconds)} | ${n0(r.left)} |`,
    ),
  ].join('\n');
}

/** The servers of the same-I/O section, in the order of its columns (bench/servers/same-io.ts). */
export const SAME_IO_SERVERS = ['floor', 'fastify', 'baselineC', 'api'] as const;
export type SameIoServer = (typeof SAME_IO_SERVERS)[number];
const SAME_IO_LABELS: Record<SameIoServer, string> = {
  floor: 'node:http floor',
  fastify: 'Nest on Fastify',
  baselineC: 'C: Nest on Express',
  api: 'our API',
};
/** `goal`: issue 61's least ratio of our route's req/s to the floor's. */
export type SameIoRows = { row: string; paced: boolean; goal?: number; rounds: Rounds<SameIoServer> }[];

const kbPerRequest = (m: Measurement) => (m.gc ? m.gc.allocatedBytes / 1024 / Math.max(1, m.total) : NaN);
const longestPause = (m: Measurement) => (m.gc?.pausesMs.length ? Math.max(...m.gc.pausesMs) : NaN);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const OVER_FLOOR = SAME_IO_SERVERS.filter((k) => k !== 'floor');
const allRounds = (rounds: Rounds<SameIoServer>) => SAME_IO_SERVERS.flatMap((k) => rounds[k]);

/**
 * The hot routes on four servers making the same I/O: node:http (the floor), bare Nest on Fastify, bare Nest on
 * Express (baseline C) and the API; req/s as paired ratios to the floor, CPU and garbage per request, and the paced
 * POST's tail against the floor's.
 */
export function renderSameIo(rows: SameIoRows): string {
  const full = rows.filter((r) => !r.paced);
  const vsFloor = (rounds: Rounds<SameIoServer>, k: SameIoServer) => pairedRatio(rounds[k], rounds.floor, 'rps');
  const out = [
    '## The hot routes against the same I/O: node:http, Nest on Fastify, Nest on Express, paired rounds',
    "Three servers make only each route's own I/O, the same code (bench/servers/same-io.ts) on the same pg, ioredis " +
      "and bullmq: one limiter script call (the API's Lua), then the pet read by primary key, the same list query, or " +
      'the message + outbox INSERT and one queue add; named statements, an auto-pipelined Redis client. The **floor** is ' +
      'node:http alone around it (baseline-floor-http.ts: match the path, parse the JSON body, stringify the answer); ' +
      'bare Nest 12 on Fastify (baseline-nest-fastify.ts) and baseline C, bare Nest 12 on Express ' +
      '(baseline-io.ts), serve it from one controller. Each round measures the four in turn (order rotated); a ratio ' +
      "is the median of the rounds' req/s ratios to the floor (min–max), 1.00 = the I/O and node:http alone. " +
      "Allocation is the sum of V8's `allocated=` over the collections of the measured seconds " +
      '(`--trace-gc-nvp`) per request.',
    table(
      [
        'Route',
        ...SAME_IO_SERVERS.map((k) => `${SAME_IO_LABELS[k]} req/s`),
        'Fastify ÷ floor',
        'Express ÷ floor',
        '**API ÷ floor**',
        'goal',
        'API ÷ C',
        'failed',
      ],
      full.map(({ row, goal, rounds }) => {
        const api = vsFloor(rounds, 'api');
        return [
          row,
          ...SAME_IO_SERVERS.map((k) => n0(medianRound(rounds[k]).rps)),
          paired(vsFloor(rounds, 'fastify')),
          paired(vsFloor(rounds, 'baselineC')),
          `**${paired(api)}**`,
          goal === undefined ? '' : `≥ ${n2(goal)}: ${api.median >= goal ? 'met' : 'not met'}`,
          paired(pairedRatio(rounds.api, rounds.baselineC, 'rps')),
          failedInAll(allRounds(rounds)),
        ];
      }),
    ),
    "Server CPU per answered request (median round), the same ratios by CPU (the floor's µs per request over the " +
      "server's, paired; CPU time leaves out the time a server waits for its core, req/s does not) and allocation per request:",
    table(
      [
        'Route',
        ...SAME_IO_SERVERS.map((k) => `${SAME_IO_LABELS[k]} CPU µs/req`),
        ...OVER_FLOOR.map((k) => `${SAME_IO_LABELS[k]} ÷ floor by CPU`),
        ...SAME_IO_SERVERS.map((k) => `${SAME_IO_LABELS[k]} KB/req`),
      ],
      full.map(({ row, rounds }) => [
        row,
        ...SAME_IO_SERVERS.map((k) => n0(medianRound(rounds[k]).cpuUsPerReq)),
        ...OVER_FLOOR.map((k) => paired(pairedRatio(rounds[k], rounds.floor, 'cpu'))),
        ...SAME_IO_SERVERS.map((k) => n1(median(rounds[k].map(kbPerRequest)))),
      ]),
    ),
  ];
  for (const { row, rounds } of rows.filter((r) => r.paced)) {
    const p99To = (k: SameIoServer, base: SameIoServer) => rounds[k].map((m, i) => m.p99 / rounds[base][i].p99);
    const spread = (v: number[]) => `${n2(median(v))}× median of rounds (${n2(Math.min(...v))}–${n2(Math.max(...v))})`;
    out.push(
      `### ${row}, evenly spaced: p99 against the floor's`,
      table(
        [
          'round',
          ...SAME_IO_SERVERS.map((k) => `${SAME_IO_LABELS[k]} p50 / p99 ms`),
          'API p99 ÷ floor',
          'API p99 ÷ C',
          'API longest GC pause ms',
          'API KB/req',
        ],
        rounds.api.map((m, i) => [
          String(i + 1),
          ...SAME_IO_SERVERS.map((k) => `${n2(rounds[k][i].p50)} / ${n2(rounds[k][i].p99)}`),
          n2(m.p99 / rounds.floor[i].p99),
          n2(m.p99 / rounds.baselineC[i].p99),
          n1(longestPause(m)),
          n1(kbPerRequest(m)),
        ]),
      ),
      `API p99 ÷ floor p99 ${spread(p99To('api', 'floor'))}, goal ≤ 1.50 every round: ` +
        `${p99To('api', 'floor').every((r) => r <= 1.5) ? 'met' : 'not met'}; Nest on Fastify ÷ floor ` +
        `${spread(p99To('fastify', 'floor'))}; C ÷ floor ${spread(p99To('baselineC', 'floor'))}; ` +
        `API ÷ C ${spread(p99To('api', 'baselineC'))}; failed ${failedInAll(allRounds(rounds))}.`,
    );
  }
  return out.join('\n\n') + '\n';
}
