import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** Runs the built operator CLI with the test environment plus `env`; rejects (with code, stdout, stderr) on a non-zero exit. */
export const cliWithEnv = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  exec(process.execPath, ['dist/apps/cli/src/main.js', ...args], { env: { ...process.env, LOG_FILE: '', ...env } });

export const cli = (...args: string[]) => cliWithEnv({}, ...args);

/** Runs the CLI as an operator does, through package.json's bin: `npx petstore ...`. */
export const npxPetstore = (...args: string[]) =>
  exec('npx', ['--no-install', 'petstore', ...args], { env: { ...process.env, LOG_FILE: '' } });
