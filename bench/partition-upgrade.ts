/**
 * The partitioned-history migration, and each one after it, on a database with ROWS rows (default 1 M) in each
 * of messages, events, webhook_deliveries and usage_minutes: how long each holds the tables
 * (docs/storage.md, "The upgrade"). A database of its own, dropped at the end.
 *   npm run bench:partition-upgrade        (ROWS=100000 for a quick run)
 */
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dataSourceOptions, maintenanceUrl, MIGRATIONS } from '@app/database';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const DB = 'petstore_bench_partition_upgrade';

async function main(): Promise<void> {
  const base = loadConfig({ ...process.env, DEMO_SEED: 'false' });
  const url = new URL(base.databaseUrl);
  url.pathname = `/${DB}`;
  const admin = new Client({ connectionString: maintenanceUrl(base.databaseUrl) });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DB}`);
  // Seeding takes longer than a request may.
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: url.toString(),
    DEMO_SEED: 'false',
    DATABASE_STATEMENT_TIMEOUT_MS: '3600000',
  });
  // The partitioned-history migration by name: later ones assume partitioned tables.
  const at = MIGRATIONS.findIndex((m) => m.name === 'PartitionedHistory1764400000000');
  if (at < 0) throw new Error('PartitionedHistory1764400000000 is not in MIGRATIONS');
  const before = new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(0, at) });
  await before.initialize();
  try {
    await before.runMigrations();
    const t0 = Date.now();
    await before.query(`INSERT INTO accounts (name, plan) SELECT 'a' || g, 'pro' FROM generate_series(1, 100) g`);
    await before.query(
      `INSERT INTO webhooks (account_id, url, events, secret) SELECT id, 'https://x.example', '{pet.created}', 's' FROM accounts`,
    );
    const start = Date.now() - 30 * 86_400_000;
    await before.query(
      `INSERT INTO messages (id, account_id, message, status, attempts, created_at)
       SELECT 'msg_' || lpad(to_hex($1::bigint + g * 2), 12, '0') || lpad(to_hex(g), 16, '0'), 1 + g % 100,
              'hello', CASE WHEN g % 1000 = 0 THEN 'queued' ELSE 'processed' END, 1,
              to_timestamp(($1::bigint + g * 2) / 1000.0)
         FROM generate_series(1, $2) g`,
      [start, ROWS],
    );
    await before.query(
      `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, created_at)
       SELECT 1 + g % 100, 'message.processed', 'message', g::text, 1, '{"a":1}', to_timestamp(($1::bigint + g * 2) / 1000.0)
         FROM generate_series(1, $2) g`,
      [start, ROWS],
    );
    await before.query(
      `INSERT INTO webhook_deliveries (webhook_id, account_id, event_id, event_type, status, attempts, created_at)
       SELECT 1 + g % 100, 1 + g % 100, g, 'message.processed', 'delivered', 1, to_timestamp(($1::bigint + g * 2) / 1000.0)
         FROM generate_series(1, $2) g`,
      [start, ROWS],
    );
    await before.query(
      `INSERT INTO usage_minutes (account_id, minute, key_id, admitted)
       SELECT 1 + g % 100, date_trunc('minute', now()) - (g / 100) * interval '1 minute', g % 100, 1
         FROM generate_series(1, $1) g`,
      [ROWS],
    );
    await before.query('VACUUM ANALYZE');
    const sizes = await before.query(
      `SELECT relname, pg_size_pretty(pg_total_relation_size(oid)) AS size FROM pg_class
        WHERE relname IN ('messages', 'events', 'webhook_deliveries', 'usage_minutes')`,
    );
    console.log(`seeded ${ROWS} rows per table in ${Date.now() - t0} ms:`, sizes);
  } finally {
    await before.destroy();
  }
  try {
    // It and each one after it, timed alone: each runs in a transaction that holds the tables it changes.
    for (let i = at; i < MIGRATIONS.length; i++) {
      const after = new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(0, i + 1) });
      await after.initialize();
      try {
        const t = Date.now();
        await after.runMigrations();
        console.log(
          `${new MIGRATIONS[i]().name} on ${ROWS} rows per table: ${Date.now() - t} ms (tables locked that long)`,
        );
        if (i === MIGRATIONS.length - 1)
          console.log(
            await after.query(
              `SELECT i.inhparent::regclass::text AS parent, c.relname, c.reltuples::bigint AS rows FROM pg_inherits i
                 JOIN pg_class c ON c.oid = i.inhrelid WHERE c.relkind = 'r' ORDER BY 1, 2`,
            ),
          );
      } finally {
        await after.destroy();
      }
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
