import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../support/free-port';

const root = join(__dirname, '..', '..', '..');
export const LOG_DIR = join(root, 'test', 'artifacts', 'faults');

/** Every child this test process started, so none outlives it, whatever a test did. */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** From the signal we sent (or from start when it died by itself) to the exit. */
  ms: number;
}

let seq = 0;

/**
 * A real `node dist/apps/<app>/src/main.js` process on its own port and log file, started
 * with the test environment plus overrides (typically DATABASE_URL/REDIS_URL through a TcpProxy).
 */
export class ServiceProcess {
  private child?: ChildProcess;
  private exit?: Promise<Exit>;
  private stderr = '';
  private signalledAt = 0;
  readonly logFile: string;
  readonly url: string;

  /** Where its /metrics is: the API's METRICS_PORT, the worker's ops port. */
  readonly metricsUrl: string;

  private constructor(
    readonly app: 'api' | 'worker',
    private readonly env: Record<string, string>,
    readonly port: number,
    private readonly metricsPort: number,
  ) {
    mkdirSync(LOG_DIR, { recursive: true });
    // Unique across test files too: jest gives each file a fresh module (seq restarts) in the same process.
    this.logFile = join(LOG_DIR, `${app}-${process.pid}-${Date.now()}-${++seq}.log`);
    this.url = `http://127.0.0.1:${port}`;
    this.metricsUrl = `http://127.0.0.1:${metricsPort}`;
  }

  static async start(app: 'api' | 'worker', env: Record<string, string> = {}): Promise<ServiceProcess> {
    const port = await freePort();
    return new ServiceProcess(app, env, port, app === 'api' ? await freePort() : port).start();
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Spawns the process and waits until /health/ready answers 200. */
  async start(readyTimeoutMs = 30_000): Promise<this> {
    const portVar =
      this.app === 'api'
        ? { PORT: String(this.port), WORKER_PORT: '0', METRICS_PORT: String(this.metricsPort) }
        : { WORKER_PORT: String(this.port) };
    const started = Date.now();
    const child = spawn(process.execPath, [join(root, 'dist', 'apps', this.app, 'src', 'main.js')], {
      cwd: root,
      env: { ...process.env, ...this.env, ...portVar, LOG_FILE: this.logFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    this.stderr = '';
    children.add(child);
    child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.signalledAt = started;
    this.exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        children.delete(child);
        resolve({ code, signal, ms: Date.now() - this.signalledAt });
      }),
    );
    await this.waitReady(readyTimeoutMs);
    return this;
  }

  async waitReady(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`${this.app} exited before it was ready: ${this.stderr.slice(0, 2000)}`);
      try {
        const res = await fetch(`${this.url}/health/ready`, { signal: AbortSignal.timeout(2_000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${this.app} not ready within ${timeoutMs} ms: ${this.stderr.slice(0, 2000)}`);
  }

  /** Sends a signal and resolves when the process has exited. */
  signal(signal: NodeJS.Signals): Promise<Exit> {
    if (!this.child || !this.exit) throw new Error(`${this.app} was never started`);
    this.signalledAt = Date.now();
    if (this.running) this.child.kill(signal);
    return this.exit;
  }

  kill9(): Promise<Exit> {
    return this.signal('SIGKILL');
  }

  /** Cleanup: whatever state it is in, it is gone afterwards. */
  async stop(): Promise<void> {
    if (this.running) await this.kill9();
  }

  get errors(): string {
    return this.stderr;
  }

  /** The value of a metric on the process's /metrics, e.g. `metric('x', { space: 'old' })` (NaN when absent). */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const text = await (await fetch(`${this.metricsUrl}/metrics`, { signal: AbortSignal.timeout(3_000) })).text();
    const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    const series = pairs.length ? `${name}{${pairs.join(',')}}` : name;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : NaN;
  }
}

export async function stopAll(processes: (ServiceProcess | undefined)[]): Promise<void> {
  await Promise.all(processes.map((p) => (p ? p.stop() : Promise.resolve())));
}

const exec = promisify(execFile);

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node dist/apps/<app>/src/main.js ...args` to its end (killed after `timeoutMs`), with the
 * test environment plus `env`, and returns what it printed: for start-ups expected to fail.
 */
export async function runToExit(
  app: 'api' | 'worker' | 'cli',
  env: Record<string, string>,
  args: string[] = [],
  timeoutMs = 15_000,
): Promise<Run> {
  const started = Date.now();
  const child = spawn(process.execPath, [join(root, 'dist', 'apps', app, 'src', 'main.js'), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  children.delete(child);
  return { code, signal, ms: Date.now() - started, stdout, stderr };
}

/** An enterprise account with limits high enough that load tests never meet a 429, made by the operator CLI. */
export async function createAccount(databaseUrl: string, name: string): Promise<{ accountId: number; apiKey: string }> {
  const { stdout } = await exec(
    process.execPath,
    [
      join(root, 'dist', 'apps', 'cli', 'src', 'main.js'),
      'account:create',
      '--name',
      name,
      '--plan',
      'enterprise',
      '--limit-minute',
      '10000000',
      '--limit-day',
      '100000000',
      '--json',
    ],
    { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_FILE: '' } },
  );
  return JSON.parse(stdout.trim()) as { accountId: number; apiKey: string };
}
