import { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['outbox', 'events', 'webhook_deliveries', 'messages', 'orders'];

// The relay and the sweep continue the trace of the request that created a record (NULL: tracing off). A nullable
// column without default is a catalogue change, no table rewrite.
export class Traceparent1763770000000 implements MigrationInterface {
  name = 'Traceparent1763770000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS traceparent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS traceparent`);
  }
}
