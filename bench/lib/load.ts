import autocannon from 'autocannon';
import { paced, percentile } from './paced';
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
}

export interface LoadOptions {
  connections: number;
  warmupS: number;
  durationS: number;
  pid?: number;
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

async function measurePaced(target: Target, rate: number, o: LoadOptions): Promise<Measurement> {
  if (o.warmupS > 0) await paced(target, rate, o.warmupS, o.connections);
  const sampler = o.pid ? new RssSampler(o.pid) : undefined;
  const cpu0 = o.pid ? cpuMs(o.pid) : NaN;
  const r = await paced(target, rate, o.durationS, o.connections);
  const cpuUsed = o.pid ? cpuMs(o.pid) - cpu0 : NaN;
  const sorted = r.latenciesMs.sort((a, b) => a - b);
  return {
    rps: r.ok / r.elapsedS,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    failures: r.failures,
    total: r.ok + r.failures,
    peakRssMb: sampler?.stop() ?? NaN,
    cpuUsPerReq: (cpuUsed * 1000) / (r.ok + r.failures),
  };
}

export async function measure(target: Target, o: LoadOptions): Promise<Measurement> {
  if (target.rate) return measurePaced(target, target.rate, o);
  if (o.warmupS > 0) await autocannon({ ...options(target, o.connections), duration: o.warmupS });
  const sampler = o.pid ? new RssSampler(o.pid) : undefined;
  const cpu0 = o.pid ? cpuMs(o.pid) : NaN;
  const r = await autocannon({ ...options(target, o.connections), duration: o.durationS });
  const cpuUsed = o.pid ? cpuMs(o.pid) - cpu0 : NaN;
  const peakRssMb = sampler?.stop() ?? NaN;
  return {
    rps: r['2xx'] / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failures: r.non2xx + r.errors + r.timeouts,
    total: r.requests.total,
    peakRssMb,
    cpuUsPerReq: (cpuUsed * 1000) / r.requests.total,
  };
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
