import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where `listen` keeps its secrets: $XDG_CONFIG_HOME/petstore, else ~/.config/petstore. */
export function configDir(): string {
  // The user's own directory, not the service's configuration (AppConfig has no place for it).
  // eslint-disable-next-line no-restricted-properties
  const xdg = process.env.XDG_CONFIG_HOME;
  // The XDG rule: a relative XDG_CONFIG_HOME is ignored.
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.config'), 'petstore');
}

export const secretsFile = () => join(configDir(), 'listen-secrets.json');

type Secrets = Record<string, { secret: string; createdAt: string }>;

function read(file: string): Secrets {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Secrets) : {};
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`${file} cannot be read (${(err as Error).message}): remove it and a new secret is made`);
  }
}

/**
 * The secret `listen` signs with for this account of this API on this machine: made on first use, then the same on
 * every run, so a receiver under development keeps its secret across restarts (as Stripe CLI's does). Kept readable by
 * the user alone (a file 0600 in a directory 0700).
 */
export function stableSecret(baseUrl: string, accountId: number, generate: () => string): string {
  const file = secretsFile();
  const key = `${baseUrl} account ${accountId}`;
  const secrets = read(file);
  const known = secrets[key];
  if (known && typeof known.secret === 'string' && known.secret.startsWith('whsec_')) return known.secret;
  const secret = generate();
  secrets[key] = { secret, createdAt: new Date().toISOString() };
  mkdirSync(configDir(), { recursive: true, mode: 0o700 });
  // Written whole, then renamed over the old one: a run stopped half-way leaves the old file.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
  return secret;
}
