import type { Event } from '@petstore/client';
import {
  apiKeyOf,
  Command,
  json,
  newKeyCommand,
  print,
  required,
  runtime,
  str,
  UsageError,
  withApp,
} from './cli-command';

/** For an integrator's laptop: live events forwarded to a local URL, sample events, a demo account. */
export const DEVELOPER_COMMANDS: Record<string, Command> = {
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
