import { Client, Pool } from 'pg';
import { loadConfig } from '@app/config';
import { unitDatabase } from '@app/testing';
import { dataSourceOptions } from './data-source-options';
import { ensureDatabase, maintenanceUrl } from './ensure-database';
import { NoPrimaryError, PrimaryLocator } from './primary-locator';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Against the real Postgres as the one server taking writes, beside a port nothing listens on; a
 * database-wide default_transaction_read_only stands in for a server demoted to a standby.
 */
describe('PrimaryLocator', () => {
  const own = unitDatabase('primary_locator');
  const server = new URL(own.url);
  let admin: Client;
  let pool: Pool;
  let locator: PrimaryLocator;
  const setReadOnly = (on: boolean) =>
    admin.query(`ALTER DATABASE "${own.name}" SET default_transaction_read_only = ${on ? 'on' : 'off'}`);

  beforeAll(async () => {
    await ensureDatabase(own.url);
    admin = new Client({ connectionString: maintenanceUrl(own.url) });
    await admin.connect();
    await setReadOnly(false);
    const hosts = [
      // Nothing listens on port 1 (privileged, never a test's server): refused at once.
      { host: '127.0.0.1', port: 1 },
      { host: server.hostname, port: Number(server.port || 5432) },
    ];
    locator = PrimaryLocator.for(own.url, hosts);
    pool = new Pool({ connectionString: own.url, Client: locator.Client, max: 2 });
    // An idle connection terminated by the test (as TypeORM does, the pool's owner hears of it).
    pool.on('error', () => undefined);
  });

  afterAll(async () => {
    await setReadOnly(false);
    await Promise.all([pool.end(), admin.end()]);
  });

  it('connects to the server that takes writes, whichever place it has in the list', async () => {
    const { rows } = await pool.query<{ ro: string }>('SELECT current_setting($1) AS ro', ['transaction_read_only']);
    expect(rows[0].ro).toBe('off');
    expect(await locator.primary()).toEqual({ host: server.hostname, port: Number(server.port || 5432) });
  });

  it('refuses a connection to a server become read-only with 08001, and follows it back, without a new pool', async () => {
    await setReadOnly(true);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [own.name]);
    await sleep(50);
    const refused = await pool.query('SELECT 1').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(NoPrimaryError);
    expect(refused).toMatchObject({ code: '08001' });
    // Asked again: no server takes writes (and for a moment, nobody is asked at all).
    await expect(locator.primary()).rejects.toBeInstanceOf(NoPrimaryError);

    await setReadOnly(false);
    await sleep(300);
    await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  });

  it("one server: the pool keeps pg's own Client (no probe, no extra round trip)", () => {
    const one = loadConfig({ DATABASE_URL: own.url });
    expect((dataSourceOptions(one).extra as { Client?: unknown }).Client).toBeUndefined();
    const several = loadConfig({
      DATABASE_URL: `postgres://postgres@127.0.0.1:1,${server.host}/${own.name}?target_session_attrs=read-write`,
    });
    expect((dataSourceOptions(several).extra as { Client?: unknown }).Client).toBe(
      PrimaryLocator.for(several.databaseUrl, several.databaseHosts).Client,
    );
  });
});
