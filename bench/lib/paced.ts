import { ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Target } from './load';
import { killedWithDriver, TS_NODE } from './proc';

// autocannon's overallRate lets every connection send its share at the start of each second, so
// "1,000/s" is a burst of 1,000 requests per second and its p99 measures the burst. Here requests
// are due evenly spaced, and each is timed from when it was due (open loop: a slow answer delays no
// later request's clock).

export interface PacedResult {
  latenciesMs: number[];
  /** When each answer's request was due, on the wall clock (`performance.timeOrigin + performance.now()`: comparable across processes), in the order of latenciesMs. */
  dueAtMs: number[];
  ok: number;
  failures: number;
  /** Failures by cause: an HTTP status, `timeout`, or the socket error's code (ECONNRESET, ...). */
  failureCauses: Record<string, number>;
  elapsedS: number;
}

export async function paced(
  target: Target,
  rate: number,
  durationS: number,
  connections: number,
): Promise<PacedResult> {
  const base = new URL(target.url);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const total = Math.round(rate * durationS);
  const [latenciesMs, dueAtMs]: number[][] = [[], []];
  let [ok, failures, settled, sent] = [0, 0, 0, 0];
  const failureCauses: Record<string, number> = {};
  const start = performance.now();
  const dueAt = (k: number) => start + (k * 1000) / rate;

  await new Promise<void>((resolve) => {
    const settle = (due: number, failure: string | undefined) => {
      latenciesMs.push(performance.now() - due);
      dueAtMs.push(performance.timeOrigin + due);
      if (failure === undefined) ok++;
      else {
        failures++;
        failureCauses[failure] = (failureCauses[failure] ?? 0) + 1;
      }
      if (++settled === total) resolve();
    };
    const fire = (due: number) => {
      let done = false;
      const once = (failure: string | undefined) => !done && ((done = true), settle(due, failure));
      const over = target.next?.() ?? {};
      const body = over.body ?? target.body;
      const req = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method: over.method ?? target.method ?? 'GET',
          path: over.path ?? base.pathname + base.search,
          headers: { ...target.headers, ...over.headers },
          timeout: 10_000,
        },
        (res) => {
          res.resume();
          const status = res.statusCode!;
          res.on('end', () => once(status >= 200 && status < 300 ? undefined : String(status)));
        },
      );
      req.on('timeout', () => (once('timeout'), req.destroy()));
      req.on('error', (err: NodeJS.ErrnoException) => once(err.code ?? err.message));
      req.end(body);
    };
    const tick = () => {
      const now = performance.now();
      for (; sent < total && dueAt(sent) <= now; sent++) fire(dueAt(sent));
      if (sent < total) setTimeout(tick, Math.max(0, dueAt(sent) - performance.now()));
    };
    tick();
  });
  agent.destroy();
  return { latenciesMs, dueAtMs, ok, failures, failureCauses, elapsedS: (performance.now() - start) / 1000 };
}

/**
 * `paced` from a process of its own (a separate client, as another tenant's would be), with a small
 * young generation so its own scavenges stay short. One load at a time.
 */
export class PacedClient {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<PacedClient> {
    const child = killedWithDriver(
      fork(join(__dirname, 'paced-process.ts'), [], {
        execArgv: [...TS_NODE, '--max-semi-space-size=1'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    await once(child, 'message');
    return new PacedClient(child);
  }

  async run(target: Omit<Target, 'next'>, rate: number, durationS: number, connections: number): Promise<PacedResult> {
    const answer = once(this.child, 'message');
    this.child.send({ target, rate, durationS, connections });
    return (await answer)[0] as PacedResult;
  }

  stop(): void {
    this.child.kill();
  }
}

export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
