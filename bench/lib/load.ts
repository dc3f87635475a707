import autocannon from 'autocannon';
import { paced, percentile } from './paced';
import { GcSummary, GcTrace } from './gc-trace';
import { cpuMs, RssSampler } from './proc';

export interface Target {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Requests per second, evenly spaced (an open-loop load: bench/lib/paced.ts); unset: as fast as answered. */
  rate?: number;
  /** Called by autocannon per request. */
  next?: () => { method?: 'GET' | 'POST'; path?: string; body?: string; headers?: Record<string, string> };
}

export interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  /** Outside 2xx plus socket errors and timeouts: a row with any is suspect. */
  failures: number;
  total: number;
  peakRssMb: number;
  /** Server CPU µs per answered request. */
  cpuUsPerReq: number;
  /** The server's collections while measured, when it runs with GC_TRACE_FLAGS and `gc` was given. */
  gc?: GcSummary;
}

export interface LoadOptions {
  connections: number;
  warmupS: number;
  durationS: number;
  pid?: number;
  gc?: GcTrace;
}

function options(target: Target, connections: number): autocannon.Options {
  const base = new URL(target.url);
  const request: autocannon.Request = {
    method: target.method ?? 'GET',
    path: base.pathname + base.search,
    headers: target.headers,
    body: target.body,
  };
  if (target.next) {
    const next = target.next;
    request.setupRequest = (req) => ({ ...req, ...next() });
  }
  return { url: base.origin, connections, timeout: 10, requests: [request] };
}

type Run = Pick<Measurement, 'rps' | 'p50' | 'p99' | 'failures' | 'total'>;

/** One load run: paced when the target has a rate, else autocannon as fast as answered. */
async function run(target: Target, connections: number, durationS: number): Promise<Run> {
  if (target.rate) {
    const r = await paced(target, target.rate, durationS, connections);
    return {
      rps: r.ok / r.elapsedS,
      p50: percentile(r.latenciesMs, 50),
      p99: percentile(r.latenciesMs, 99),
      failures: r.failures,
      total: r.ok + r.failures,
    };
  }
  const r = await autocannon({ ...options(target, connections), duration: durationS });
  return {
    rps: r['2xx'] / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failures: r.non2xx + r.errors + r.timeouts,
    total: r.requests.total,
  };
}

export async function measure(target: Target, o: LoadOptions): Promise<Measurement> {
  if (o.warmupS > 0) await run(target, o.connections, o.warmupS);
  const sampler = o.pid ? new RssSampler(o.pid) : undefined;
  const cpu0 = o.pid ? cpuMs(o.pid) : NaN;
  o.gc?.mark();
  const r = await run(target, o.connections, o.durationS);
  const cpuUsed = o.pid ? cpuMs(o.pid) - cpu0 : NaN;
  const gc = await o.gc?.since();
  return { ...r, peakRssMb: sampler?.stop() ?? NaN, cpuUsPerReq: (cpuUsed * 1000) / r.total, gc };
}

/** Fails naming what went wrong unless every answer was 2xx. */
export async function send(target: Target, amount: number, connections = 50, timeoutS = 10): Promise<void> {
  const r = await autocannon({ ...options(target, connections), timeout: timeoutS, amount });
  if (r['2xx'] !== amount) {
    throw new Error(
      `${target.method ?? 'GET'} ${target.url}: ${r['2xx']} of ${amount} answered 2xx ` +
        `(non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})`,
    );
  }
}
