import type { Scope } from '@app/access';
import { Command, json, print, requiredInt, safeName, str, table, UsageError, withApp } from './cli-command';

/** An account's API keys: issued (shown once), listed without secrets, revoked. */
export const KEY_COMMANDS: Record<string, Command> = {
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
};
