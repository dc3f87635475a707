import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');

/** A process that arms the watchdog, then hangs on SIGTERM as a stuck shutdown would (its handler never finishes, an interval keeps it alive). */
function stuckProcess(graceMs: number) {
  const script = `
    require('./libs/lifecycle/src/shutdown-watchdog').armShutdownWatchdog(${graceMs});
    process.on('SIGTERM', () => undefined);
    setInterval(() => undefined, 1000);
    process.stdout.write('armed\\n');`;
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const armed = new Promise<void>((resolve) =>
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.includes('armed')) resolve();
    }),
  );
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, armed, exited, output: () => output };
}

describe('shutdown watchdog', () => {
  let p: ReturnType<typeof stuckProcess> | undefined;
  // Without a working watchdog the process never ends by itself.
  afterEach(() => p?.child.kill('SIGKILL'));

  it('ends a process whose shutdown hangs at SHUTDOWN_GRACE_MS + 2 s, with exit code 1 and one line saying so', async () => {
    p = stuckProcess(500);
    await p.armed;
    const sentAt = Date.now();
    p.child.kill('SIGTERM');
    const code = await p.exited;
    const ms = Date.now() - sentAt;
    expect(code).toBe(1);
    expect(ms).toBeGreaterThanOrEqual(2_400);
    expect(ms).toBeLessThan(4_500);
    expect(p.output().match(/shutdown did not finish in time: exiting/g)).toHaveLength(1);
  }, 30_000);
});
