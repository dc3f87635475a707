import { MigrationInterface, QueryRunner } from 'typeorm';

// Taking the next number with an upsert locks the counter row: two transactions emitting for one resource get 1, 2
// instead of both computing max + 1 and one failing on the unique index.
export class EventSequences1763750000000 implements MigrationInterface {
  name = 'EventSequences1763750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE event_sequences (
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        resource_type text NOT NULL,
        resource_id text NOT NULL,
        last integer NOT NULL,
        PRIMARY KEY (account_id, resource_type, resource_id)
      )`);
    await q.query(`
      INSERT INTO event_sequences (account_id, resource_type, resource_id, last)
      SELECT account_id, resource_type, resource_id, max(sequence) FROM events
      GROUP BY account_id, resource_type, resource_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE event_sequences`);
  }
}
