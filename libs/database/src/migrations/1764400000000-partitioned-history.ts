import { MigrationInterface, QueryRunner } from 'typeorm';
import { HistoryTable, keyLiteral } from '../partitions';

interface Conversion extends HistoryTable {
  /** Retention's age indexes (it drops partitions now) and uniques without the key. */
  dropIndexes: string[];
  constraints: string[];
  indexes: string[];
}

const HISTORY: Conversion[] = [
  {
    table: 'messages',
    column: 'id',
    key: 'message-id',
    dropIndexes: ['messages_finished_age'],
    constraints: [`PRIMARY KEY (id)`, `FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE`],
    indexes: [
      `messages_account_id ON messages (account_id, id)`,
      `messages_account_status ON messages (account_id, status, id)`,
      `messages_unfinished_due ON messages (created_at, id) WHERE status IN ('queued', 'processing')`,
    ],
  },
  {
    table: 'events',
    column: 'id',
    key: 'time-ordered-id',
    sequence: 'events_id_seq',
    // Unique per resource by the event_sequences counter the emit statement takes.
    dropIndexes: ['events_fanned_out_age', 'events_resource_sequence'],
    constraints: [`PRIMARY KEY (id)`, `FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE`],
    indexes: [
      `events_account_id ON events (account_id, id)`,
      `events_account_type ON events (account_id, type, id)`,
      `events_not_fanned_out_due ON events (created_at, id) WHERE NOT fanned_out`,
    ],
  },
  {
    table: 'webhook_deliveries',
    column: 'id',
    key: 'time-ordered-id',
    sequence: 'webhook_deliveries_id_seq',
    // One first delivery per event and webhook: the fan-out writes deliveries only for the events it marks fanned out.
    dropIndexes: [
      'webhook_deliveries_finished_age',
      'webhook_deliveries_event_id',
      'webhook_deliveries_first_of_event',
    ],
    constraints: [
      `PRIMARY KEY (id)`,
      `FOREIGN KEY (webhook_id) REFERENCES webhooks(id) ON DELETE CASCADE`,
      `FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE`,
    ],
    indexes: [
      `webhook_deliveries_webhook_id ON webhook_deliveries (webhook_id, id)`,
      `webhook_deliveries_pending_due ON webhook_deliveries ((coalesce(next_attempt_at, created_at)), id)
        WHERE status = 'pending'`,
    ],
  },
  {
    table: 'usage_minutes',
    column: 'minute',
    key: 'timestamp',
    dropIndexes: ['usage_minutes_age'],
    constraints: [
      `PRIMARY KEY (account_id, minute, key_id)`,
      `FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE`,
    ],
    indexes: [],
  },
];

// Each table becomes the partition `<table>_legacy` of its rows' keys up to now (ATTACH checks the bound with one
// scan, no copy). Deliveries lose their foreign key to events: each table drops its own partitions (docs/storage.md).
export class PartitionedHistory1764400000000 implements MigrationInterface {
  name = 'PartitionedHistory1764400000000';

  async up(q: QueryRunner): Promise<void> {
    const now = Date.now();
    await q.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_event_id_fkey`);
    for (const t of HISTORY) {
      const legacy = `${t.table}_legacy`;
      for (const index of t.dropIndexes) await q.query(`DROP INDEX IF EXISTS ${index}`);
      if (t.sequence) await q.query(`ALTER TABLE ${t.table} ALTER COLUMN ${t.column} DROP IDENTITY IF EXISTS`);
      await q.query(`ALTER TABLE ${t.table} RENAME TO ${legacy}`);
      const kept: { indexname: string }[] = await q.query(`SELECT indexname FROM pg_indexes WHERE tablename = $1`, [
        legacy,
      ]);
      for (const { indexname } of kept)
        await q.query(`ALTER INDEX ${indexname} RENAME TO ${indexname.replace(t.table, legacy)}`);
      await q.query(
        `CREATE TABLE ${t.table} (LIKE ${legacy} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (${t.column})`,
      );
      if (t.sequence) {
        await q.query(
          `CREATE SEQUENCE ${t.sequence} START WITH ${keyLiteral(t.key, now)} OWNED BY ${t.table}.${t.column}`,
        );
        await q.query(`ALTER TABLE ${t.table} ALTER COLUMN ${t.column} SET DEFAULT nextval('${t.sequence}')`);
      }
      for (const constraint of t.constraints) await q.query(`ALTER TABLE ${t.table} ADD ${constraint}`);
      for (const index of t.indexes) await q.query(`CREATE INDEX ${index}`);
      await q.query(
        `ALTER TABLE ${t.table} ATTACH PARTITION ${legacy} FOR VALUES FROM (MINVALUE) TO (${keyLiteral(t.key, now)})`,
      );
      await q.query(`CREATE TABLE ${t.table}_default PARTITION OF ${t.table} DEFAULT`);
    }
  }

  /** Every partition's rows are copied into one plain table: a long lock on a large database. */
  async down(q: QueryRunner): Promise<void> {
    for (const t of [...HISTORY].reverse()) {
      await q.query(`ALTER TABLE ${t.table} RENAME TO ${t.table}_partitioned`);
      await q.query(`CREATE TABLE ${t.table} (LIKE ${t.table}_partitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      if (t.sequence) await q.query(`ALTER TABLE ${t.table} ALTER COLUMN ${t.column} DROP DEFAULT`);
      await q.query(`INSERT INTO ${t.table} SELECT * FROM ${t.table}_partitioned`);
      await q.query(`DROP TABLE ${t.table}_partitioned`);
      for (const constraint of t.constraints) await q.query(`ALTER TABLE ${t.table} ADD ${constraint}`);
      for (const index of t.indexes) await q.query(`CREATE INDEX ${index}`);
      if (t.sequence) {
        await q.query(`ALTER TABLE ${t.table} ALTER COLUMN ${t.column} ADD GENERATED ALWAYS AS IDENTITY`);
        await q.query(
          `SELECT setval(pg_get_serial_sequence('${t.table}', '${t.column}'), (SELECT coalesce(max(${t.column}), 1) FROM ${t.table}))`,
        );
      }
    }
    await q.query(`ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey
      FOREIGN KEY (event_id) REFERENCES events(id) ON DELETE CASCADE`);
    await q.query(`CREATE UNIQUE INDEX webhook_deliveries_first_of_event ON webhook_deliveries (webhook_id, event_id)
      WHERE resend_of IS NULL`);
  }
}
