import { existsSync, readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { ParseArgsConfig, parseEnv } from 'node:util';

// Only node: modules load at start: `--help` and `--version` answer without the app (a fraction of a
// second, no store touched). A command loads the rest (./runtime) when it runs.
export const runtime = () => import('./runtime.js');

/** Where one invocation reads and writes: the process's own in the binary (main.ts), a test's in-process. */
export interface CliIo {
  stdout: Writable;
  stderr: Writable;
  /** What the commands read: the configuration, PETSTORE_API_KEY, HOME and XDG_CONFIG_HOME. */
  env: NodeJS.ProcessEnv;
  /** The binary's `.env`: it fills in the configuration `env` leaves unset, as loadConfig() has it. */
  envFile?: string;
  /** Ends `listen` (exit 0); read only as it starts, so the binary wires SIGINT and SIGTERM to it then. */
  signal?: AbortSignal;
}

type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

/** One `npx petstore <name>`: its help text, its options, and what it does. */
export interface Command {
  synopsis: string;
  summary: string;
  options: Options;
  /** How many arguments it takes besides its options (none unless said). */
  positionals?: number;
  run(values: Values, positionals: string[], io: CliIo): Promise<void>;
}

/** Printed with a pointer to its --help, exit code 2. */
export class UsageError extends Error {}

export const str = { type: 'string' } as const;
export const json = { json: { type: 'boolean' } } as const;
export const limitOptions = { 'limit-minute': str, 'limit-day': str } as const;

export function required(values: Values, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) throw new UsageError(`--${name} is required`);
  return v;
}

/** `--api-key`, else PETSTORE_API_KEY: a key in the environment does not show in the process list. */
export function apiKeyOf(values: Values, env: NodeJS.ProcessEnv): string {
  const flag = values['api-key'];
  if (typeof flag === 'string' && flag) return flag;
  // The client's own credential for a remote API, not the service's configuration (AppConfig has no place for it).
  const fromEnv = env.PETSTORE_API_KEY;
  if (fromEnv) return fromEnv;
  throw new UsageError('--api-key (or the PETSTORE_API_KEY environment variable) is required');
}

/** The same rule as the API's names. */
export async function safeName(values: Values): Promise<string> {
  const name = required(values, 'name');
  const problem = (await runtime()).nameProblem(name);
  if (problem) throw new UsageError(`--name ${problem}`);
  return name;
}

export function int(values: Values, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v)) throw new UsageError(`--${name} must be a positive integer`);
  return Number(v);
}

export const requiredInt = (values: Values, name: string): number =>
  int({ [name]: required(values, name) }, name) as number;

export const limits = (values: Values) => ({
  limitPerMinute: int(values, 'limit-minute'),
  limitPerDay: int(values, 'limit-day'),
});

/** How to get a key for an account whose key was shown once (seed:demo, npm start). */
export const newKeyCommand = (accountId: number) =>
  `npx petstore key:create --account ${accountId} --name dev --scopes read,write,admin`;

/** Plain-text columns under a header row, each as wide as its longest cell (--json is for scripts). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [header, ...rows]
    .map((row) => row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]) : cell)).join('  '))
    .join('\n');
}

export function print(io: CliIo, values: Values, obj: unknown, human: string): void {
  io.stdout.write(values.json ? `${JSON.stringify(obj)}\n` : `${human}\n`);
}

type Get = <S>(token: (new (...a: never[]) => S) | symbol) => S;
type Runtime = Awaited<ReturnType<typeof runtime>>;

export function configOf(r: Runtime, io: CliIo) {
  const file = io.envFile && existsSync(io.envFile) ? parseEnv(readFileSync(io.envFile, 'utf8')) : {};
  return r.loadConfig({ ...file, ...io.env });
}

export async function withApp<T>(io: CliIo, fn: (get: Get, r: Runtime) => Promise<T>): Promise<T> {
  const r = await runtime();
  const { CliModule, NestFactory, requirePostgres } = r;
  // One line naming DATABASE_URL instead of TypeORM's retries; Nest prints nothing itself and
  // hands any failure to the one-line report at the bottom (abortOnError).
  const config = configOf(r, io);
  await requirePostgres(config.databaseUrl, config.databaseHosts);
  const app = await NestFactory.createApplicationContext(CliModule.forConfig(config), {
    logger: false,
    abortOnError: false,
  });
  try {
    return await fn((t) => app.get(t), r);
  } finally {
    await app.close();
  }
}
