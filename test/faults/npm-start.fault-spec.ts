import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { report } from './support/load';
import { tryConnect } from './support/raw-http';
import { freePort } from '../support/free-port';
import { LOG_DIR } from './support/service-process';

const root = join(__dirname, '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every process below `pid` (children, grandchildren...), from ps. */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number));
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of rows)
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitReady(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health/live`, { signal: AbortSignal.timeout(1_000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`nothing answered on :${port} within ${timeoutMs} ms`);
    await sleep(200);
  }
}

describe('faults: npm start and signals', () => {
  let npm: ChildProcess | undefined;
  let started: number[] = [];

  afterEach(() => {
    for (const pid of [npm?.pid, ...started]) if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    npm = undefined;
    started = [];
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to the npm process stops the API and the worker, leaves no process and frees both ports`, async () => {
      const [port, workerPort] = [await freePort(), await freePort()];
      const proc = spawn('npm', ['start'], {
        cwd: root,
        env: {
          ...process.env,
          PORT: String(port),
          WORKER_PORT: String(workerPort),
          LOG_FILE: join(LOG_DIR, `npm-start-${signal}.log`),
          SHUTDOWN_GRACE_MS: '3000',
        },
        stdio: 'ignore',
      });
      npm = proc;
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        proc.once('exit', (code, sig) => resolve({ code, signal: sig })),
      );
      await Promise.all([waitReady(port, 60_000), waitReady(workerPort, 60_000)]);
      started = descendants(proc.pid as number);
      expect(started.length).toBeGreaterThanOrEqual(3); // start.mjs, the API, the worker

      const sentAt = Date.now();
      proc.kill(signal);
      const exit = await Promise.race([exited, sleep(15_000).then(() => 'still running')]);
      const ms = Date.now() - sentAt;
      await sleep(200);
      const left = started.filter(alive);
      const ports = [await tryConnect(port), await tryConnect(workerPort)];
      report(`npm start, ${signal}`, { exit, ms, processes: started.length, left: left.length, ports });

      expect(exit).not.toBe('still running');
      expect(left).toEqual([]);
      expect(ports).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    });
  }
});
