import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { AccountsService, ApiKeysService } from '@app/auth';
import { loadConfig } from '@app/config';
import { migrate, Plan, Scope } from '@app/database';
import { ApiError } from '@app/errors';
import { CliModule } from './cli.module';
import { DemoSeeder } from './demo-seeder';

const USAGE = `Usage: npm run cli -- <command> [options]
  migrate                                   create the database if missing, apply migrations
  account:create --name N --plan free|pro|business|enterprise [--limit-minute M --limit-day D] [--json]
  account:set-plan --account ID --plan P [--limit-minute M --limit-day D] [--json]
  key:create --account ID --name N [--scopes read,write] [--expires-at ISO] [--json]
  key:revoke --account ID --key ID
  seed:demo                                 on an empty database, create a demo account and print its key`;

const OPTIONS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  account: { type: 'string' },
  key: { type: 'string' },
  scopes: { type: 'string' },
  'expires-at': { type: 'string' },
  'limit-minute': { type: 'string' },
  'limit-day': { type: 'string' },
  json: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function required(values: Values, name: keyof Values): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) throw new Error(`--${name} is required`);
  return v;
}

function int(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new Error(`--${name} must be a positive integer`);
  return Number(v);
}

function print(values: Values, obj: Record<string, unknown>, human: string): void {
  process.stdout.write(values.json ? `${JSON.stringify(obj)}\n` : `${human}\n`);
}

async function withApp<T>(fn: (get: <S>(t: new (...a: never[]) => S) => S) => Promise<T>): Promise<T> {
  const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'] });
  try {
    return await fn((t) => app.get(t));
  } finally {
    await app.close();
  }
}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const command = positionals[0];
  const limits = () => ({
    limitPerMinute: int(values['limit-minute'], 'limit-minute'),
    limitPerDay: int(values['limit-day'], 'limit-day'),
  });
  switch (command) {
    case 'migrate': {
      const applied = await migrate(loadConfig());
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
      return;
    }
    case 'account:create':
      return withApp(async (get) => {
        const { account, key } = await get(AccountsService).create(
          required(values, 'name'),
          required(values, 'plan') as Plan,
          limits(),
        );
        print(
          values,
          { accountId: account.id, name: account.name, plan: account.plan, keyId: key.id, apiKey: key.secret },
          `account ${account.id} created; API key (shown once): ${key.secret}`,
        );
      });
    case 'account:set-plan':
      return withApp(async (get) => {
        const a = await get(AccountsService).setPlan(
          int(required(values, 'account'), 'account') as number,
          required(values, 'plan') as Plan,
          limits(),
        );
        print(
          values,
          { accountId: a.id, plan: a.plan, limitPerMinute: a.limitPerMinute, limitPerDay: a.limitPerDay },
          `account ${a.id} is now on plan ${a.plan}`,
        );
      });
    case 'key:create':
      return withApp(async (get) => {
        const expires = values['expires-at'] ? new Date(values['expires-at']) : undefined;
        if (expires && Number.isNaN(expires.getTime())) throw new Error('--expires-at must be an ISO 8601 date');
        const key = await get(ApiKeysService).create(int(required(values, 'account'), 'account') as number, {
          name: required(values, 'name'),
          scopes: values.scopes ? (values.scopes.split(',') as Scope[]) : undefined,
          expiresAt: expires,
        });
        print(
          values,
          { keyId: key.id, apiKey: key.secret, scopes: key.scopes },
          `key ${key.id} created (shown once): ${key.secret}`,
        );
      });
    case 'key:revoke':
      return withApp(async (get) => {
        await get(ApiKeysService).revoke(
          int(required(values, 'account'), 'account') as number,
          int(required(values, 'key'), 'key') as number,
        );
        print(values, { revoked: true }, 'key revoked');
      });
    case 'seed:demo':
      return withApp(async (get) => {
        const seeded = await get(DemoSeeder).seed();
        if (seeded)
          print(values, seeded, `demo account ${seeded.accountId} created; its API key (shown once): ${seeded.apiKey}`);
      });
    default:
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = 2;
  }
}

run(process.argv.slice(2)).catch((err: Error) => {
  process.stderr.write(`error: ${err instanceof ApiError ? err.message : err.message}\n`);
  process.exit(1);
});
