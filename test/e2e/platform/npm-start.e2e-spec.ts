import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from '../../support/http';
import { freePort } from '../../support/free-port';

const root = join(__dirname, '..', '..', '..');
const FRAME_END = /└─+┘\n/;

/**
 * `npm start` (scripts/start.mjs) on free ports, both streams in one pipe as a terminal shows them; back once framed,
 * and `settleMs` later for a test of what comes after the frame.
 */
async function npmStart(settleMs = 0) {
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
  const start = spawn('sh', ['-c', 'exec node scripts/start.mjs 2>&1'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const run = { start, output: '', exit: new Promise<number | null>((resolve) => start.once('exit', resolve)) };
  start.stdout?.on('data', (d: Buffer) => (run.output += d.toString()));
  await eventually(async () => FRAME_END.test(run.output), 90_000);
  await new Promise((r) => setTimeout(r, settleMs));
  return run;
}

/**
 * `npm start` as a newcomer sees it (scripts/start.mjs on this file's empty database): readable
 * lines, the demo key last and framed, and a SIGTERM that reads as a clean stop.
 */
describe('npm start, the first screen', () => {
  let start: ChildProcess | undefined;
  let output = '';
  let exit: Promise<number | null>;

  beforeAll(async () => {
    // Anything the apps still had to say would come within a second.
    const run = await npmStart(1_000);
    start = run.start;
    exit = run.exit;
    output = run.output;
    // The later lines too (the SIGTERM test reads them).
    start.stdout?.on('data', (d: Buffer) => (output += d.toString()));
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
    expect(lines.some((l) => / INFO {2}api NestApplication: Nest application successfully started$/.test(l))).toBe(
      true,
    );
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

describe('npm start again, the demo key shown before', () => {
  let run: Awaited<ReturnType<typeof npmStart>> | undefined;
  // SIGTERM, so start.mjs stops its API and worker (SIGKILL would leave them running, holding the test's pipe).
  afterAll(async () => {
    if (run?.start.exitCode !== null) return;
    run.start.kill('SIGTERM');
    await Promise.race([run.exit, new Promise((r) => setTimeout(r, 20_000))]);
  }, 30_000);

  it('says how to make a new key for the demo account instead', async () => {
    run = await npmStart();
    const frame = run.output.slice(run.output.indexOf('┌'));
    expect(frame).not.toMatch(/export KEY=/);
    expect(frame).toMatch(/│ The demo key was shown on the first start only\. A new key for account (\d+): +│/);
    const account = /A new key for account (\d+):/.exec(frame)![1];
    expect(frame).toMatch(
      new RegExp(`│ {3}npx petstore key:create --account ${account} --name dev --scopes read,write,admin +│`),
    );
    run.start.kill('SIGTERM');
    expect(await run.exit).toBe(0);
  }, 120_000);
});
