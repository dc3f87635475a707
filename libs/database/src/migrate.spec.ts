import { Client } from 'pg';
import { loadConfig } from '@app/config';
import { maintenanceUrl, migrate } from './ensure-database';
import { MIGRATIONS } from './migrations';
import { unitDatabase } from '@app/testing';

/** Against the real Postgres, on a database of its own that each run drops and creates anew. */
describe('migrate', () => {
  const own = unitDatabase('migrate');
  const config = loadConfig({ DATABASE_URL: own.url });

  beforeAll(async () => {
    const admin = new Client({ connectionString: maintenanceUrl(config.databaseUrl) });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${own.name}" WITH (FORCE)`);
    await admin.end();
  });

  it('run twice at once on a new database, applies every migration once and both succeed', async () => {
    const [a, b] = await Promise.all([migrate(config), migrate(config)]);
    expect([...a, ...b].sort()).toEqual(MIGRATIONS.map((m) => new m().name).sort());
  });
});
