import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where `listen` keeps its secrets: $XDG_CONFIG_HOME/petstore, else ~/.config/petstore, in `env`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  // The user's own directory, not the service's configuration (AppConfig has no place for it).
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG rule: a relative XDG_CONFIG_HOME is ignored; os.homedir() reads the process's HOME.
  return join(xdg && xdg.startsWith('/') ? xdg : join(env.HOME || homedir(), '.config'), 'petstore');
}

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
 * The secret `listen` signs with, kept in `dir` (configDir's) for this account of this API on this machine: made on first use, then the same on
 * every run, so a receiver under development keeps its secret across restarts (as Stripe CLI's does). Kept readable by
 * the user alone (a file 0600 in a directory 0700).
 */
export function stableSecret(dir: string, baseUrl: string, accountId: number, generate: () => string): string {
  const file = join(dir, 'listen-secrets.json');
  const key = `${baseUrl} account ${accountId}`;
  const secrets = read(file);
  const known = secrets[key];
  if (known && typeof known.secret === 'string' && known.secret.startsWith('whsec_')) return known.secret;
  const secret = generate();
  secrets[key] = { secret, createdAt: new Date().toISOString() };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Written whole, then renamed over the old one: a run stopped half-way leaves the old file.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
  return secret;
}
