import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dataSourceOptions } from './data-source-options';
import { maintenanceUrl } from './ensure-database';
import { MIGRATIONS } from './migrations';
import { createPartitionsAhead, dropPartition, HistoryTable, partitionName, rangePartitions } from './partitions';
import { unitDatabase } from '@app/testing';

const MESSAGES: HistoryTable = { table: 'messages', column: 'id', key: 'message-id' };
const HOUR = 3_600_000;
const messageId = (ms: number, n: number) =>
  `msg_${ms.toString(16).padStart(12, '0')}${n.toString(16).padStart(16, '0')}`;

/**
 * Against the real Postgres, on a database of its own that each run drops and creates anew:
 * every key of a history table has a partition, before and after the job and retention change them.
 */
describe('history partitions', () => {
  const own = unitDatabase('partitions');
  const config = loadConfig({ DATABASE_URL: own.url, DEMO_SEED: 'false' });
  let db: DataSource;
  let accountId: number;
  const explicit = MIGRATIONS.findIndex((m) => m.name === 'ExplicitPartitionRanges1764500000000');

  /** Name and range (as ms, ±Infinity open) of every partition of messages, oldest first. */
  const layout = async () => (await rangePartitions(db, MESSAGES)).map((p) => [p.name, p.fromMs, p.toMs]);
  const partitionOf = async (id: string) =>
    (await db.query(`SELECT tableoid::regclass::text AS p FROM messages WHERE id = $1`, [id]))[0]?.p as string;
  const insert = (id: string) =>
    db.query(`INSERT INTO messages (id, account_id, message, status) VALUES ($1, $2, 'm', 'processed')`, [
      id,
      accountId,
    ]);

  beforeAll(async () => {
    const admin = new Client({ connectionString: maintenanceUrl(config.databaseUrl) });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${own.name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${own.name}"`);
    await admin.end();
    // Up to the partitioned tables with their default partition, as a database upgraded before ExplicitPartitionRanges.
    db = new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(0, explicit) });
    await db.initialize();
    await db.runMigrations();
    [{ id: accountId }] = await db.query(
      `INSERT INTO accounts (name, plan) VALUES ('partitions', 'free') RETURNING id`,
    );
  });
  afterAll(() => db?.destroy());

  it('moves the default partition rows into explicit ranges that cover every key, then splits each new period off the overflow', async () => {
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    await createPartitionsAhead(db, MESSAGES, { widthMs: HOUR, ahead: 1, nowMs: Date.now(), lockTimeoutMs: 2_000 });
    const [legacy, current, next] = await rangePartitions(db, MESSAGES);
    expect([current.toMs, next.toMs]).toEqual([hour + HOUR, hour + 2 * HOUR]);
    // Rows the default took: one in a range retention dropped, one after the partitions made ahead.
    await db.query(`ALTER TABLE messages DETACH PARTITION ${current.name}`);
    await db.query(`DROP TABLE ${current.name}`);
    const [late, ahead] = [messageId(current.fromMs, 1), messageId(hour + 5 * HOUR, 2)];
    for (const id of [late, ahead]) await insert(id);
    expect([await partitionOf(late), await partitionOf(ahead)]).toEqual(['messages_default', 'messages_default']);

    const upgrade = new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(explicit) });
    await upgrade.initialize();
    await upgrade.runMigrations();
    await upgrade.destroy();
    expect(await layout()).toEqual([
      [legacy.name, -Infinity, current.fromMs],
      [partitionName('messages_expired', current.fromMs), current.fromMs, current.toMs],
      [next.name, next.fromMs, next.toMs],
      ['messages_overflow', next.toMs, Infinity],
    ]);
    expect([await partitionOf(late), await partitionOf(ahead)]).toEqual([
      partitionName('messages_expired', current.fromMs),
      'messages_overflow',
    ]);

    await createPartitionsAhead(db, MESSAGES, { widthMs: HOUR, ahead: 5, nowMs: Date.now(), lockTimeoutMs: 2_000 });
    expect(await partitionOf(ahead)).toBe(partitionName('messages', hour + 5 * HOUR));
    expect((await layout()).at(-1)).toEqual(['messages_overflow', hour + 6 * HOUR, Infinity]);
  });

  it("gives a dropped partition's range to one expired partition with the expired ones beside it, so a late row still has one", async () => {
    const [legacy, expired, next, after] = await rangePartitions(db, MESSAGES);
    await dropPartition(db, MESSAGES, legacy.name, 2_000);
    expect((await layout()).slice(0, 2)).toEqual([
      ['messages_expired', -Infinity, expired.toMs],
      [next.name, next.fromMs, next.toMs],
    ]);
    await dropPartition(db, MESSAGES, next.name, 2_000);
    expect((await layout()).slice(0, 2)).toEqual([
      ['messages_expired', -Infinity, next.toMs],
      [after.name, after.fromMs, after.toMs],
    ]);
    // The expired range's row written before stays; one written now in a dropped range has a partition.
    const late = messageId(next.fromMs, 3);
    await insert(late);
    expect([await partitionOf(messageId(expired.fromMs, 1)), await partitionOf(late)]).toEqual([
      'messages_expired',
      'messages_expired',
    ]);
  });
});
