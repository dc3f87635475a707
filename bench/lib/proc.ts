import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import packageJson from '../../package.json';

/** The load generator (this process) runs on core 1. */
export const SERVER_CORE = 0;
export const LOAD_CORE = 1;

export const HAS_TASKSET = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Runs this process (the load generator) on its own core: re-executes it under taskset, once. */
export function pinLoadGenerator(): void {
  if (!HAS_TASKSET || process.env.BENCH_PINNED) return;
  const r = spawnSync(
    'taskset',
    ['-c', String(LOAD_CORE), process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } },
  );
  process.exit(r.status ?? 1);
}

/** The bench-only servers import TypeScript sources. */
export const TS_NODE = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];

const live = new Set<ChildProcess>();
// A failed or stopped run must not leave servers behind: they are killed with the driver ('exit' does not come
// on a signal, which is how a long bench:soak is stopped early).
process.on('exit', () => live.forEach((c) => c.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(128 + 2));

export interface Proc {
  name: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A `node -e` script beside the bench (a CPU stand-in), killed with the driver like the servers. */
export function spawnNodeScript(code: string): ChildProcess {
  return killedWithDriver(spawn(process.execPath, ['-e', code], { stdio: 'ignore' }));
}

/** A child of the bench that must not outlive it. */
export function killedWithDriver(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** The V8 flags every launcher gives the apps (package.json config.nodeOptions): the bench's servers run with them too. */
export const APP_NODE_OPTIONS = packageJson.config.nodeOptions;

/** `pinned` false: every core (a section with no load generator to keep apart). */
export function startNode(
  name: string,
  args: string[],
  env: Record<string, string>,
  logDir: string,
  pinned = true,
): Proc {
  const pin = HAS_TASKSET && pinned;
  const cmd = pin ? 'taskset' : process.execPath;
  const argv = pin ? ['-c', String(SERVER_CORE), process.execPath, ...args] : args;
  const child = spawn(cmd, argv, {
    env: { ...process.env, NODE_OPTIONS: APP_NODE_OPTIONS, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(join(logDir, `${name}.out`), { flags: 'a' });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  killedWithDriver(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    // taskset execs node in place: the pid is the server's own.
    pid: child.pid as number,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Until 2xx, the process dies, or the deadline passes. */
export async function waitForHttp(url: string, proc: Proc, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited with ${proc.child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${proc.name} not ready at ${url} after ${timeoutMs} ms`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** VmHWM for the lifetime peak. */
export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
    return kb / 1024;
  } catch {
    return NaN;
  }
}

// Steadier than requests/s on a shared machine, which depend on the share of the core we get.
export function cpuMs(pid: number): number {
  try {
    return cpuMsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return NaN;
  }
}

/** CPU ms in a /proc/<pid>/stat line: utime and stime are the 12th and 13th fields after the command name. */
function cpuMsOfStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** VmHWM is lifetime-wide and would blur rows. */
export class RssSampler {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), 100);
  }

  private sample(): void {
    const mb = rssMb(this.pid);
    if (mb > this.peak) this.peak = mb;
  }

  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.peak;
  }
}

/** CPU ms so far: the machine's busy time, and each process of the named programs (Postgres backends, say). */
export function cpuByProgram(names: string[]): {
  machine: number;
  processes: Map<number, { name: string; ms: number }>;
} {
  const processes = new Map<number, { name: string; ms: number }>();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const name = names.find((n) => comm.startsWith(n));
      if (name) processes.set(Number(pid), { name, ms: cpuMsOfStat(stat) });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  // /proc/stat's first line: user nice system idle iowait irq softirq steal ... in ticks.
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { machine: ((user + nice + system + irq + softirq + steal) * 1000) / CLOCK_TICKS, processes };
}

/** Cores each program kept busy between two `cpuByProgram` readings `ms` apart (a process that ended in between is left out). */
export function coresBetween(
  before: ReturnType<typeof cpuByProgram>,
  after: ReturnType<typeof cpuByProgram>,
  ms: number,
): Record<string, number> {
  const cores: Record<string, number> = { machine: (after.machine - before.machine) / ms };
  for (const [pid, { name, ms: used }] of after.processes) {
    cores[name] = (cores[name] ?? 0) + (used - (before.processes.get(pid)?.ms ?? 0)) / ms;
  }
  return cores;
}

/** A loopback port free at the time of asking. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
