import { GcTrace } from './gc-trace';
import { measure, Measurement, Target } from './load';

// This VM's speed drifts by up to 2x within a minute: each round measures every contender once, in
// an order rotated by round, and the figure is the median of the per-round ratios.
export interface Contender<K extends string> {
  key: K;
  target: Target;
  pid?: number;
  gc?: GcTrace;
}

export type Rounds<K extends string> = Record<K, Measurement[]>;

export async function pairedRounds<K extends string>(
  contenders: Contender<K>[],
  o: { rounds: number; connections: number; firstWarmupS: number; warmupS: number; durationS: number },
  log: (msg: string) => void,
): Promise<Rounds<K>> {
  const out = Object.fromEntries(contenders.map((c) => [c.key, [] as Measurement[]])) as Rounds<K>;
  for (let round = 0; round < o.rounds; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const c = contenders[(i + round) % contenders.length];
      const m = await measure(c.target, {
        connections: o.connections,
        warmupS: round === 0 ? o.firstWarmupS : o.warmupS,
        durationS: o.durationS,
        pid: c.pid,
        gc: c.gc,
      });
      log(
        `  round ${round + 1} of ${o.rounds}, ${c.key}: ${Math.round(m.rps)} req/s, ${Math.round(m.cpuUsPerReq)} µs/req, ${m.failures} failed`,
      );
      out[c.key].push(m);
    }
  }
  return out;
}

export interface PairedRatio {
  median: number;
  min: number;
  max: number;
}

export function pairedRatio(of: Measurement[], to: Measurement[], by: 'rps' | 'cpu'): PairedRatio {
  const r = of
    .map((m, i) => (by === 'rps' ? m.rps / to[i].rps : to[i].cpuUsPerReq / m.cpuUsPerReq))
    .sort((a, b) => a - b);
  const mid = Math.floor(r.length / 2);
  return { median: r.length % 2 ? r[mid] : (r[mid - 1] + r[mid]) / 2, min: r[0], max: r[r.length - 1] };
}

/** For the latency and CPU columns. */
export function medianRound(ms: Measurement[]): Measurement {
  return [...ms].sort((a, b) => a.rps - b.rps)[Math.floor(ms.length / 2)];
}
