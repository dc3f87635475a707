import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig, DatabaseHost } from '@app/config';
import { dataSourceOptions } from './data-source-options';
import { PrimaryLocator } from './primary-locator';

/** The server's maintenance database, which always exists. */
export function maintenanceUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  return url.toString();
}

/** A client of `url`'s server, or with several `hosts`, of the one taking writes now (CREATE DATABASE needs it). */
export function clientOf(url: string, hosts: DatabaseHost[] = [], connectionTimeoutMillis?: number): Client {
  const Class = hosts.length > 1 ? PrimaryLocator.for(url, hosts).Client : Client;
  return new Class({ connectionString: url, connectionTimeoutMillis });
}

/** `hosts`: DATABASE_URL's servers (config.databaseHosts), when it names more than one. */
export async function ensureDatabase(databaseUrl: string, hosts: DatabaseHost[] = []): Promise<boolean> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error('DATABASE_URL names an unsupported database name');
  const client = clientOf(maintenanceUrl(databaseUrl), hosts);
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    await client.query(`CREATE DATABASE "${name}"`);
    return true;
  } catch (err) {
    // Two processes racing to create it: the loser sees duplicate_database (42P04), or, when both
    // passed the check above at once, the catalogue's unique index (23505).
    if (['42P04', '23505'].includes((err as { code?: string }).code ?? '')) return false;
    throw err;
  } finally {
    await client.end();
  }
}

// Two migrate runs at once (an init container per pod): the second waits, then finds nothing to apply. A session
// lock, so Postgres itself, not a transaction-mode pooler. Polled: a waiting statement holds a snapshot, and the
// other run's CREATE INDEX CONCURRENTLY waits for every snapshot to end (a deadlock).
async function takeMigrationLock(ds: DataSource): Promise<void> {
  for (;;) {
    const [{ taken }] = await ds.query(`SELECT pg_try_advisory_lock(hashtext('petstore:migrations')) AS taken`);
    if (taken) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function migrate(config: AppConfig): Promise<string[]> {
  await ensureDatabase(config.databaseUrl, config.databaseHosts);
  // One connection: the advisory lock below belongs to its session, and so does every migration.
  const ds = new DataSource(dataSourceOptions(config, { poolSize: 1 }));
  await ds.initialize();
  try {
    await takeMigrationLock(ds);
    const applied = await ds.runMigrations();
    return applied.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
