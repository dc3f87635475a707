import { createServer, Server } from 'node:net';
import { freePort } from '../support/free-port';
import { Run, runToExit } from './support/service-process';

const databaseUrl = process.env.DATABASE_URL as string;
const redisUrl = process.env.REDIS_URL as string;

/** A URL of the service on a local port where nothing listens. */
async function nothingAt(serviceUrl: string): Promise<string> {
  const u = new URL(serviceUrl);
  u.port = String(await freePort());
  return u.toString();
}

/** The whole output (stdout and stderr; logs go to their file) is one line, matching `line`. */
function expectOneLine(run: Run, line: RegExp): void {
  expect(run.code).not.toBe(0);
  expect(run.code).not.toBeNull(); // exited by itself, not killed at the time limit
  expect(run.ms).toBeLessThan(5_000);
  expect(run.stdout).toBe('');
  expect(run.stderr.split('\n')).toEqual([expect.stringMatching(line), '']);
  expect(run.stderr).not.toMatch(/^\s+at /m); // no stack frame
  expect(run.stderr).not.toContain('\u001b['); // no colour
}

describe('faults: a start-up that cannot succeed prints one line naming the cause and exits non-zero', () => {
  // Every process logs to a file here, so stdout and stderr hold only what a start-up prints itself.
  const logs = { LOG_FILE: `${__dirname}/../artifacts/faults/start-up.log` };
  let busy: Server;
  let busyPort: number;

  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => busy.close(resolve)));

  for (const app of ['api', 'worker', 'cli'] as const) {
    const args = app === 'cli' ? ['account:create', '--name', 'never', '--plan', 'free'] : [];

    it(`${app}: a DATABASE_URL that is not a postgres:// URL`, async () => {
      const run = await runToExit(app, { ...logs, DATABASE_URL: 'mysql://127.0.0.1/x' }, args);
      expectOneLine(run, /^.*DATABASE_URL: must be a postgres:\/\/ URL$/);
    });

    it(`${app}: Postgres unreachable`, async () => {
      const run = await runToExit(app, { ...logs, DATABASE_URL: await nothingAt(databaseUrl) }, args);
      expectOneLine(run, /Postgres at 127\.0\.0\.1:\d+ \(DATABASE_URL\) unreachable: .*ECONNREFUSED/);
    });
  }

  it('cli migrate: Postgres unreachable', async () => {
    const run = await runToExit('cli', { ...logs, DATABASE_URL: await nothingAt(databaseUrl) }, ['migrate']);
    expectOneLine(run, /Postgres at 127\.0\.0\.1:\d+ \(DATABASE_URL\) unreachable/);
  });

  it('api: a PORT that is not a port', async () => {
    const run = await runToExit('api', { ...logs, PORT: '70000' });
    expectOneLine(run, /^api failed to start: invalid configuration: PORT: .*65535/);
  });

  it('api: a PORT already in use', async () => {
    const run = await runToExit('api', { ...logs, PORT: String(busyPort) });
    expectOneLine(run, /^api failed to start: cannot listen on PORT \d+: .*EADDRINUSE/);
  });

  it('api: a PORT already in use is named before Postgres is tried', async () => {
    const run = await runToExit('api', { ...logs, PORT: String(busyPort), DATABASE_URL: await nothingAt(databaseUrl) });
    expectOneLine(run, /^api failed to start: cannot listen on PORT \d+: .*EADDRINUSE/);
  });

  it('api: a METRICS_PORT already in use', async () => {
    const run = await runToExit('api', { ...logs, METRICS_PORT: String(busyPort) });
    expectOneLine(run, /^api failed to start: cannot listen on METRICS_PORT \d+: .*EADDRINUSE/);
  });

  it('worker: a WORKER_PORT already in use is named before Postgres and Redis are tried', async () => {
    const run = await runToExit('worker', {
      ...logs,
      WORKER_PORT: String(busyPort),
      DATABASE_URL: await nothingAt(databaseUrl),
      REDIS_URL: await nothingAt(redisUrl),
    });
    expectOneLine(run, /^worker failed to start: cannot listen on WORKER_PORT \d+: .*EADDRINUSE/);
  });

  it('worker: a WORKER_PORT already in use', async () => {
    const run = await runToExit('worker', { ...logs, WORKER_PORT: String(busyPort) });
    expectOneLine(run, /^worker failed to start: cannot listen on WORKER_PORT \d+: .*EADDRINUSE/);
  });

  it('worker: Redis unreachable (it cannot work without it)', async () => {
    const run = await runToExit('worker', { ...logs, REDIS_URL: await nothingAt(redisUrl) });
    expectOneLine(run, /^worker failed to start: Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\) unreachable: .*ECONNREFUSED/);
  });
});
