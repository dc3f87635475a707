import { MigrationInterface, QueryRunner } from 'typeorm';

/** The records that (re-)enqueue jobs; each carries the W3C traceparent its job continues. */
const TABLES = ['outbox', 'events', 'webhook_deliveries', 'messages', 'orders'];

/**
 * A nullable `traceparent` on every record a job is (re-)enqueued from: the outbox relay and
 * the lost-job sweep then continue the trace of the request that created it. NULL when
 * tracing is off. A nullable column without default is a catalogue change, no table rewrite.
 */
export class Traceparent1763770000000 implements MigrationInterface {
  name = 'Traceparent1763770000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS traceparent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS traceparent`);
  }
}
