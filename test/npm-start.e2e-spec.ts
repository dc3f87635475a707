import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from './support/http';
import { freePort } from './support/free-port';

const root = join(__dirname, '..');
const FRAME_END = /└─+┘\n/;

/**
 * `npm start` as a newcomer sees it (scripts/start.mjs on this file's empty database): readable
 * lines, the demo key last and framed, and a SIGTERM that reads as a clean stop.
 */
describe('npm start, the first screen', () => {
  let start: ChildProcess | undefined;
  let output = '';
  let exit: Promise<number | null>;

  beforeAll(async () => {
    const [port, workerPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      WORKER_PORT: String(workerPort),
      METRICS_PORT: String(metricsPort),
      DEMO_SEED: 'true',
    };
    delete env.LOG_FORMAT;
    delete env.LOG_FILE;
    // One pipe for both streams, in the order a terminal shows them.
    start = spawn('sh', ['-c', 'exec node scripts/start.mjs 2>&1'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    start.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    exit = new Promise((resolve) => start?.once('exit', (code) => resolve(code)));
    await eventually(async () => FRAME_END.test(output), 90_000);
    // Anything the apps still had to say would come now.
    await new Promise((r) => setTimeout(r, 1_000));
  }, 120_000);
  afterAll(() => {
    if (start?.exitCode === null) start.kill('SIGKILL');
  });

  const beforeFrame = () => output.slice(0, output.indexOf('┌'));

  it('prints the demo key (68 characters) framed, and nothing after it', () => {
    const frame = output.slice(output.indexOf('┌'));
    expect(frame).toMatch(/│ +export KEY=pst_[0-9A-Za-z]{64} +│/);
    expect(output.slice(output.search(FRAME_END)).replace(FRAME_END, '').trim()).toBe('');
  });

  it('writes readable lines, the route table left to LOG_LEVEL=debug: the start fits a screen', () => {
    const lines = beforeFrame().split('\n').filter(Boolean);
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(lines.filter((l) => /Mapped \{|dependencies initialized/.test(l))).toEqual([]);
    expect(lines.some((l) => / INFO {2}api NestApplication: Nest application successfully started$/.test(l))).toBe(true);
    expect(lines.some((l) => / INFO {2}worker OpsServerService: worker ops server listening port=\d+$/.test(l))).toBe(
      true,
    );
    expect(lines.length).toBeLessThan(20);
  });

  it('on SIGTERM says both apps stopped cleanly and exits 0', async () => {
    start?.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(output).toMatch(/^api stopped cleanly$/m);
    expect(output).toMatch(/^worker stopped cleanly$/m);
    expect(output).toMatch(/ INFO {2}worker Worker: stopped cleanly ms=\d+$/m);
    expect(output).not.toMatch(/exited \(/);
  });
});
