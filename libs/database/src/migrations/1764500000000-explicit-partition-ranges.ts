import { MigrationInterface, QueryRunner } from 'typeorm';
import { expiredName, HistoryTable, overflowName, partitionBound, rangePartitions } from '../partitions';

const HISTORY: HistoryTable[] = [
  { table: 'messages', column: 'id', key: 'message-id' },
  { table: 'events', column: 'id', key: 'time-ordered-id' },
  { table: 'webhook_deliveries', column: 'id', key: 'time-ordered-id' },
  { table: 'usage_minutes', column: 'minute', key: 'timestamp' },
];

// The default partition gives way to explicit ranges, so feed pages read partitions in order (docs/storage.md):
// uncovered ranges become expired partitions, keys after the newest an overflow one; the default's rows move there.
export class ExplicitPartitionRanges1764500000000 implements MigrationInterface {
  name = 'ExplicitPartitionRanges1764500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const h of HISTORY) {
      const def = `${h.table}_default`;
      await q.query(`ALTER TABLE ${h.table} DETACH PARTITION ${def}`);
      let covered = -Infinity;
      const partitions = await rangePartitions(q, h);
      // None left (retention dropped every one): every key before now is an expired one.
      if (!partitions.length) partitions.push({ name: '', fromMs: Date.now(), toMs: Date.now() });
      for (const p of partitions) {
        if (p.fromMs > covered) await this.create(q, h, expiredName(h.table, covered), covered, p.fromMs);
        covered = p.toMs;
      }
      await this.create(q, h, overflowName(h.table), covered, Infinity);
      await q.query(`INSERT INTO ${h.table} SELECT * FROM ${def}`);
      await q.query(`DROP TABLE ${def}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const h of [...HISTORY].reverse()) {
      const def = `${h.table}_default`;
      const explicit = (await rangePartitions(q, h)).filter(
        (p) => p.name === overflowName(h.table) || p.name.startsWith(`${h.table}_expired`),
      );
      for (const p of explicit) await q.query(`ALTER TABLE ${h.table} DETACH PARTITION "${p.name}"`);
      await q.query(`CREATE TABLE ${def} PARTITION OF ${h.table} DEFAULT`);
      for (const p of explicit) {
        await q.query(`INSERT INTO ${def} SELECT * FROM "${p.name}"`);
        await q.query(`DROP TABLE "${p.name}"`);
      }
    }
  }

  private async create(q: QueryRunner, h: HistoryTable, name: string, fromMs: number, toMs: number): Promise<void> {
    await q.query(`CREATE TABLE "${name}" PARTITION OF ${h.table} ${partitionBound(h.key, fromMs, toMs)}`);
  }
}
