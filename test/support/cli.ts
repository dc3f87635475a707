import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { runCli } from '../../apps/cli/src/cli-runner';

const exec = promisify(execFile);

/** A stream that keeps what is written to it; `onLine` sees each complete line as it comes. */
class Collector extends Writable {
  text = '';
  private partial = '';

  constructor(private readonly onLine?: (line: string) => void) {
    super({ decodeStrings: false });
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: () => void): void {
    const text = chunk.toString();
    this.text += text;
    if (this.onLine) {
      const lines = (this.partial + text).split('\n');
      this.partial = lines.pop()!;
      lines.forEach(this.onLine);
    }
    done();
  }
}

/** The environment a test's CLI invocation sees: the test's plus `env`, without a log file. */
export const cliEnv = (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...process.env, LOG_FILE: '', ...env });

/** Runs one CLI invocation in this process (runCli) whatever its outcome: its exit code, stdout and stderr. */
export async function runCliCollecting(
  env: NodeJS.ProcessEnv,
  args: string[],
  opts: { signal?: AbortSignal; onStdoutLine?: (line: string) => void; onStderrLine?: (line: string) => void } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Collector(opts.onStdoutLine);
  const stderr = new Collector(opts.onStderrLine);
  const code = await runCli(args, { stdout, stderr, env: cliEnv(env), signal: opts.signal });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/**
 * Runs the operator CLI in this process with the test environment plus `env`; rejects (with code, stdout, stderr) on a
 * non-zero exit, as the spawned binary's execFile would.
 */
export async function cliWithEnv(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runCliCollecting(env, args);
  if (code !== 0)
    throw Object.assign(new Error(`petstore ${args.join(' ')} exited ${code}: ${stderr}`), { code, stdout, stderr });
  return { stdout, stderr };
}

export const cli = (...args: string[]) => cliWithEnv({}, ...args);

/** Runs the built CLI (dist/apps/cli/src/main.js) as a process: for what only a process shows (exit code, library output). */
export const cliProcess = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  exec(process.execPath, ['dist/apps/cli/src/main.js', ...args], { env: cliEnv(env) });

/** Runs the CLI as an operator does, through package.json's bin: `npx petstore ...`. */
export const npxPetstore = (...args: string[]) => exec('npx', ['--no-install', 'petstore', ...args], { env: cliEnv() });
