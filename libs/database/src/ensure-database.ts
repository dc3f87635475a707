import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions } from './data-source-options';

/** DATABASE_URL with its database replaced by the server's maintenance database, which always exists. */
export function maintenanceUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  return url.toString();
}

/** Creates the database named in DATABASE_URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error('DATABASE_URL names an unsupported database name');
  const client = new Client({ connectionString: maintenanceUrl(databaseUrl) });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    await client.query(`CREATE DATABASE "${name}"`);
    return true;
  } catch (err) {
    // Two processes racing to create it: the loser sees duplicate_database (42P04).
    if ((err as { code?: string }).code === '42P04') return false;
    throw err;
  } finally {
    await client.end();
  }
}

/** `npm run migrate`: create the database if missing, then apply pending migrations. */
export async function migrate(config: AppConfig): Promise<string[]> {
  await ensureDatabase(config.databaseUrl);
  const ds = new DataSource(dataSourceOptions(config, { poolSize: 1 }));
  await ds.initialize();
  try {
    const applied = await ds.runMigrations();
    return applied.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
