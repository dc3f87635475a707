import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { parseArgs, ParseArgsConfig, parseEnv } from 'node:util';
import type { Plan, Scope } from '@app/access';
import type { RedisClient } from '@app/redis';
import type { Event } from '@petstore/client';

// Only node: modules load at start: `--help` and `--version` answer without the app (a fraction of a
// second, no store touched). A command loads the rest (./runtime) when it runs.
const runtime = () => import('./runtime.js');

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
type Values = Record<string, string | boolean | undefined>;

interface Command {
  synopsis: string;
  summary: string;
  options: Options;
  /** How many arguments it takes besides its options (none unless said). */
  positionals?: number;
  run(values: Values, positionals: string[], io: CliIo): Promise<void>;
}

/** Printed with a pointer to its --help, exit code 2. */
class UsageError extends Error {}

const str = { type: 'string' } as const;
const json = { json: { type: 'boolean' } } as const;
const limitOptions = { 'limit-minute': str, 'limit-day': str } as const;

function required(values: Values, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) throw new UsageError(`--${name} is required`);
  return v;
}

/** `--api-key`, else PETSTORE_API_KEY: a key in the environment does not show in the process list. */
function apiKeyOf(values: Values, env: NodeJS.ProcessEnv): string {
  const flag = values['api-key'];
  if (typeof flag === 'string' && flag) return flag;
  // The client's own credential for a remote API, not the service's configuration (AppConfig has no place for it).
  const fromEnv = env.PETSTORE_API_KEY;
  if (fromEnv) return fromEnv;
  throw new UsageError('--api-key (or the PETSTORE_API_KEY environment variable) is required');
}

/** The same rule as the API's names. */
async function safeName(values: Values): Promise<string> {
  const name = required(values, 'name');
  const problem = (await runtime()).nameProblem(name);
  if (problem) throw new UsageError(`--name ${problem}`);
  return name;
}

function int(values: Values, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v)) throw new UsageError(`--${name} must be a positive integer`);
  return Number(v);
}

const requiredInt = (values: Values, name: string): number => int({ [name]: required(values, name) }, name) as number;

const limits = (values: Values) => ({
  limitPerMinute: int(values, 'limit-minute'),
  limitPerDay: int(values, 'limit-day'),
});

/** How to get a key for an account whose key was shown once (seed:demo, npm start). */
const newKeyCommand = (accountId: number) =>
  `npx petstore key:create --account ${accountId} --name dev --scopes read,write,admin`;

/** Plain-text columns under a header row, each as wide as its longest cell (--json is for scripts). */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [header, ...rows]
    .map((row) => row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]) : cell)).join('  '))
    .join('\n');
}

function print(io: CliIo, values: Values, obj: unknown, human: string): void {
  io.stdout.write(values.json ? `${JSON.stringify(obj)}\n` : `${human}\n`);
}

type Get = <S>(token: (new (...a: never[]) => S) | symbol) => S;
type Runtime = Awaited<ReturnType<typeof runtime>>;

function configOf(r: Runtime, io: CliIo) {
  const file = io.envFile && existsSync(io.envFile) ? parseEnv(readFileSync(io.envFile, 'utf8')) : {};
  return r.loadConfig({ ...file, ...io.env });
}

async function withApp<T>(io: CliIo, fn: (get: Get, r: Runtime) => Promise<T>): Promise<T> {
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

const COMMANDS: Record<string, Command> = {
  migrate: {
    synopsis: '',
    summary: 'create the database if missing, apply migrations',
    options: {},
    async run(_values, _positionals, io) {
      const r = await runtime();
      const { maintenanceUrl, migrate, requirePostgres } = r;
      const config = configOf(r, io);
      // The database itself may not exist yet: migrate creates it through the server's own.
      await requirePostgres(maintenanceUrl(config.databaseUrl), config.databaseHosts);
      const applied = await migrate(config);
      io.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    },
  },
  'account:create': {
    synopsis: '--name N --plan free|pro|business|enterprise [--limit-minute M --limit-day D] [--json]',
    summary: 'create an account and its first API key (printed once); enterprise takes both limits',
    options: { name: str, plan: str, ...limitOptions, ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { AccountsService }) => {
        const { account, key } = await get(AccountsService).create(
          await safeName(values),
          required(values, 'plan') as Plan,
          limits(values),
        );
        print(
          io,
          values,
          { accountId: account.id, name: account.name, plan: account.plan, keyId: key.id, apiKey: key.secret },
          `account ${account.id} created; API key (shown once): ${key.secret}`,
        );
      }),
  },
  'account:set-plan': {
    synopsis: '--account ID --plan P [--limit-minute M --limit-day D] [--json]',
    summary: "change an account's plan (and an enterprise account's limits)",
    options: { account: str, plan: str, ...limitOptions, ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { AccountsService }) => {
        const a = await get(AccountsService).setPlan(
          requiredInt(values, 'account'),
          required(values, 'plan') as Plan,
          limits(values),
        );
        print(
          io,
          values,
          { accountId: a.id, plan: a.plan, limitPerMinute: a.limitPerMinute, limitPerDay: a.limitPerDay },
          `account ${a.id} is now on plan ${a.plan}`,
        );
      }),
  },
  'account:list': {
    synopsis: '[--after ID] [--limit N] [--json]',
    summary: 'accounts by id, 100 (or --limit) after --after',
    options: { after: str, limit: str, ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { AccountsService }) => {
        const accounts = await get(AccountsService).list(int(values, 'limit') ?? 100, int(values, 'after'));
        const rows = accounts.map((a) => ({
          id: a.id,
          name: a.name,
          plan: a.plan,
          limitPerMinute: a.limitPerMinute,
          limitPerDay: a.limitPerDay,
          createdAt: a.createdAt.toISOString(),
        }));
        print(
          io,
          values,
          rows,
          rows.length
            ? table(
                ['ID', 'PLAN', 'CREATED', 'NAME'],
                rows.map((a) => [String(a.id), a.plan, a.createdAt, a.name]),
              )
            : 'no accounts',
        );
      }),
  },
  'key:create': {
    synopsis: '--account ID --name N [--scopes read,write,admin] [--expires-at ISO] [--json]',
    summary: 'issue an API key for an account (printed once)',
    options: { account: str, name: str, scopes: str, 'expires-at': str, ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { ApiKeysService, parseDateTime }) => {
        // A date alone means its midnight UTC; `new Date` would shift an impossible 02-30 to March.
        const at = values['expires-at'];
        const expires =
          typeof at === 'string' ? parseDateTime(/^\d{4}-\d{2}-\d{2}$/.test(at) ? `${at}T00:00:00Z` : at) : undefined;
        if (typeof at === 'string' && !expires)
          throw new UsageError('--expires-at must be an RFC 3339 date or date-time naming a real day');
        const scopes = values.scopes;
        const key = await get(ApiKeysService).create(requiredInt(values, 'account'), {
          name: await safeName(values),
          scopes: typeof scopes === 'string' ? (scopes.split(',') as Scope[]) : undefined,
          expiresAt: expires,
        });
        print(
          io,
          values,
          { keyId: key.id, apiKey: key.secret, scopes: key.scopes },
          `key ${key.id} created (shown once): ${key.secret}`,
        );
      }),
  },
  'key:list': {
    synopsis: '--account ID [--json]',
    summary: "an account's keys, revoked and expired ones too (never a secret or a hash)",
    options: { account: str, ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { AccountsService, ApiKeysService }) => {
        const accountId = requiredInt(values, 'account');
        await get(AccountsService).get(accountId);
        const keys = await get(ApiKeysService).listAll(accountId);
        const state = (k: (typeof keys)[number]) =>
          k.revokedAt ? `revoked ${k.revokedAt}` : k.expiresAt ? `expires ${k.expiresAt}` : 'no expiry';
        print(
          io,
          values,
          keys,
          keys.length
            ? table(
                ['ID', 'PREFIX', 'SCOPES', 'STATE', 'NAME'],
                keys.map((k) => [String(k.id), `${k.prefix}…`, k.scopes.join(','), state(k), k.name]),
              )
            : 'no keys',
        );
      }),
  },
  'key:revoke': {
    synopsis: '--account ID --key ID [--json]',
    summary: 'revoke a key at once (every API replica forgets it)',
    options: { account: str, key: str, ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { ApiKeysService }) => {
        await get(ApiKeysService).revoke(requiredInt(values, 'account'), requiredInt(values, 'key'));
        print(io, values, { revoked: true }, 'key revoked');
      }),
  },
  'key:legacy-count': {
    synopsis: '[--json]',
    summary: 'how many working keys are still in the format issued before tags (rotating one moves it)',
    options: { ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { ApiKeysService }) => {
        const legacyKeys = await get(ApiKeysService).countLegacy();
        print(io, values, { legacyKeys }, `${legacyKeys} working key(s) in the old format (rotate them to move them)`);
      }),
  },
  'webhook:reseal-secrets': {
    synopsis: '[--json]',
    summary: 'encrypt webhook secrets stored in plain text or under an older WEBHOOK_SECRET_KEYS key',
    options: { ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { AppConfig, DataSource, resealWebhookSecrets, WebhookSecretBox }) => {
        const box = new WebhookSecretBox(get(AppConfig).webhookSecretKeys);
        const changed = await resealWebhookSecrets(get(DataSource).manager, box);
        print(io, values, { resealed: changed }, `${changed} webhook secret(s) resealed`);
      }),
  },
  'queues:drop-old-layout': {
    synopsis: '[--json]',
    summary: "after upgrading, remove the queues' keys of the old layout (petstore:<queue>:*)",
    options: { ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { dropOldKeyLayout, EventQueue, FulfilmentQueue, MessageQueue, REDIS, WebhookQueue }) => {
        // The queues of the release that had the old layout.
        const queues = [MessageQueue, FulfilmentQueue, EventQueue, WebhookQueue];
        const removed = await dropOldKeyLayout(get<RedisClient>(REDIS), queues);
        print(io, values, { removed }, `${removed} key(s) of the old queue layout removed`);
      }),
  },
  listen: {
    synopsis:
      '--base-url URL (--forward-to URL | --print-secret) [--api-key KEY] [--events a,b] [--json]\n' +
      '  The key: --api-key, else the PETSTORE_API_KEY environment variable (a flag shows in `ps`; the flag wins).\n' +
      '  Prints `Ready!` with the signing secret once the key is checked and the stream is open; the secret is kept\n' +
      '  per API and account in $XDG_CONFIG_HOME/petstore (else ~/.config/petstore): the same on every run.\n' +
      '  --print-secret prints that secret and exits. A refused key or an API not reached after 5 tries: exit 1',
    summary: "forward the account's events, as they happen, to a local URL as signed webhook deliveries",
    options: {
      'api-key': str,
      'base-url': str,
      'forward-to': str,
      events: str,
      'print-secret': { type: 'boolean' },
      ...json,
    },
    async run(values, _positionals, io) {
      const printSecret = values['print-secret'] === true;
      const url = (name: string) => {
        const parsed = URL.parse(required(values, name));
        if (!parsed || !/^https?:$/.test(parsed.protocol)) throw new UsageError(`--${name} must be an http(s) URL`);
        return parsed.toString();
      };
      const baseUrl = url('base-url');
      const forwardTo = printSecret ? undefined : url('forward-to');
      const events = values.events;
      const apiKey = apiKeyOf(values, io.env);
      // Ctrl-C (the binary's) or the caller's stop ends the stream; the command then exits 0.
      const stop = io.signal ?? new AbortController().signal;
      const { configDir, listen } = await runtime();
      await listen(
        {
          apiKey,
          baseUrl,
          forwardTo,
          types: typeof events === 'string' ? (events.split(',') as Event['type'][]) : undefined,
          json: values.json === true,
          printSecret,
          secretsDir: configDir(io.env),
        },
        {
          print: (line) => io.stdout.write(`${line}\n`),
          warn: (line) => io.stderr.write(`${line}\n`),
        },
        stop,
      ).catch((err: Error) => {
        if (!stop.aborted) throw err;
      });
    },
  },
  trigger: {
    synopsis:
      '<event-type> --base-url URL [--api-key KEY] [--json]\n' +
      '  Makes a real <event-type> event on the account through the API (e.g. pet.created creates a pet, in the\n' +
      "  account's first category or a new one); prints what it did. `trigger` alone lists the event types it makes.\n" +
      '  The key: --api-key, else the PETSTORE_API_KEY environment variable; api_key.* need a key with admin',
    summary: 'make a sample event (pet.created, order.placed, message.processed...) through the API, e.g. for listen',
    options: { 'api-key': str, 'base-url': str, ...json },
    positionals: 1,
    async run(values, [type], io) {
      const { NOT_TRIGGERABLE, TRIGGERS, trigger } = await runtime();
      const supported = `supported: ${Object.keys(TRIGGERS).join(', ')}`;
      if (type === undefined) throw new UsageError(`an event type is required; ${supported}`);
      if (!Object.hasOwn(TRIGGERS, type)) {
        const why = Object.hasOwn(NOT_TRIGGERABLE, type) ? ` (${NOT_TRIGGERABLE[type]}, not an API call)` : '';
        throw new UsageError(`cannot trigger '${type}'${why}; ${supported}`);
      }
      const baseUrl = URL.parse(required(values, 'base-url'));
      if (!baseUrl || !/^https?:$/.test(baseUrl.protocol)) throw new UsageError('--base-url must be an http(s) URL');
      const done = await trigger(type, { apiKey: apiKeyOf(values, io.env), baseUrl: baseUrl.toString() });
      print(io, values, done, `Triggered ${type}: ${done.steps.join(', ')}${done.later ? `\n  (${done.later})` : ''}`);
    },
  },
  'seed:demo': {
    synopsis: '[--json]',
    summary: 'on an empty database, create a demo account and print its key (else: how to make a new key)',
    options: { ...json },
    run: (values, _positionals, io) =>
      withApp(io, async (get, { DemoSeeder }) => {
        const seeded = await get(DemoSeeder).seed();
        if (seeded === 'off') print(io, values, { seeded: false }, 'DEMO_SEED=false: no demo account created');
        else if ('existingAccountId' in seeded) {
          const accountId = seeded.existingAccountId;
          print(
            io,
            values,
            { seeded: false, accountId, newKey: newKeyCommand(accountId) },
            `accounts exist: no demo account created (its key was shown once); a new key: ${newKeyCommand(accountId)}`,
          );
        } else
          print(
            io,
            values,
            seeded,
            `demo account ${seeded.accountId} created; its API key (shown once): ${seeded.apiKey}`,
          );
      }),
  },
};

const NAME_WIDTH = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
const USAGE = [
  'Usage: npx petstore <command> [options]     (<command> --help for its options; --version)',
  ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(NAME_WIDTH)}  ${c.summary}`),
].join('\n');

const commandHelp = (name: string, c: Command) => `Usage: npx petstore ${name} ${c.synopsis}\n  ${c.summary}`;

// The nearest package.json upwards: the repository's, from dist/apps/cli/src and apps/cli/src, in a checkout and in the image alike.
function packageVersion(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The exit code. */
async function run(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError(`unknown command '${name}'\n${USAGE}`);
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    // Node then suggests '--' for positionals: only the first part is useful here.
    const message = (err as Error).message.split('. ')[0].replace(/^Unknown option/, 'unknown option');
    throw new UsageError(`${name}: ${message}\n${commandHelp(name, command)}`);
  }
  if (values.help) {
    io.stdout.write(`${commandHelp(name, command)}\n`);
    return 0;
  }
  const allowed = command.positionals ?? 0;
  if (positionals.length > allowed)
    throw new UsageError(`${name}: unexpected argument '${positionals[allowed]}'\n${commandHelp(name, command)}`);
  try {
    await command.run(values, positionals, io);
  } catch (err) {
    if (err instanceof UsageError) err.message = `${name}: ${err.message}\n${commandHelp(name, command)}`;
    throw err;
  }
  return 0;
}

/**
 * One invocation of the CLI (`argv` without node and the script): what it prints goes to `io`, the exit code is
 * returned (2 for a usage error, 1 for a refused or failed command); it never exits the process.
 */
export function runCli(argv: string[], io: CliIo): Promise<number> {
  return run(argv, io).catch((err: Error) => {
    io.stderr.write(`error: ${err.message}\n`);
    return err instanceof UsageError ? 2 : 1;
  });
}
