import type { Plan } from '@app/access';
import {
  Command,
  configOf,
  int,
  json,
  limitOptions,
  limits,
  print,
  required,
  requiredInt,
  runtime,
  safeName,
  str,
  table,
  withApp,
} from './cli-command';

/** The database and accounts: what an operator runs first. */
export const ACCOUNT_COMMANDS: Record<string, Command> = {
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
};
