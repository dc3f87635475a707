import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { cliWithEnv } from '../../support/cli';

const exec = promisify(execFile);

// Ports nothing listens on: a CLI that tried either would fail or hang for its 2 s connect timeout.
const NOWHERE = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/petstore', REDIS_URL: 'redis://127.0.0.1:1' };

// The modules the commands need (Nest, TypeORM, the drivers, BullMQ, the apps' libraries).
const APP_MODULE = /node_modules\/(@nestjs|typeorm|pg|ioredis|bullmq)\/|\/libs\/[a-z]+\/src\//;

/** Runs the built CLI and lists, at its exit, every module it had loaded. */
async function cliLoading(...args: string[]): Promise<{ stdout: string; loaded: string[]; ms: number }> {
  const started = Date.now();
  const { stdout, stderr } = await exec(
    process.execPath,
    [
      '-e',
      "process.on('exit', () => process.stderr.write(JSON.stringify(Object.keys(require.cache))));" +
        "require('./dist/apps/cli/src/main.js')",
      // process.argv[1], as a script's path would be.
      '--',
      'petstore',
      ...args,
    ],
    { env: { ...process.env, ...NOWHERE, LOG_FILE: '' } },
  );
  return { stdout, loaded: JSON.parse(stderr) as string[], ms: Date.now() - started };
}

/** `npx petstore --help` and `--version` answer at once: they load none of the app and touch no store. */
describe('operator CLI: --help and --version without the app', () => {
  it.each(['--help', '-h', 'account:create --help'])('%s loads no app module', async (line) => {
    const { stdout, loaded, ms } = await cliLoading(...line.split(' '));
    expect(stdout).toMatch(/^Usage: npx petstore /);
    expect(loaded.filter((path) => APP_MODULE.test(path))).toEqual([]);
    // Loose: well under a second on an idle machine; a booting CLI takes several.
    expect(ms).toBeLessThan(5_000);
  });

  it('--version loads no app module', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const { stdout, loaded } = await cliLoading('--version');
    expect(stdout).toBe(`${version}\n`);
    expect(loaded.filter((path) => APP_MODULE.test(path))).toEqual([]);
  });

  it('a command still loads the app (and names the unreachable Postgres)', async () => {
    await expect(cliWithEnv(NOWHERE, 'account:list')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: Postgres at 127\.0\.0\.1:1 \(DATABASE_URL\) unreachable/),
    });
  });
});
