import { MigrationInterface, QueryRunner } from 'typeorm';

/** Messages accepted by POST /messages and processed by the worker. */
export class Messages1763730000000 implements MigrationInterface {
  name = 'Messages1763730000000';

  async up(q: QueryRunner): Promise<void> {
    // COLLATE "C": ids are compared byte by byte, so keyset pages follow creation order.
    await q.query(`
      CREATE TABLE messages (
        id text COLLATE "C" PRIMARY KEY CHECK (id ~ '^msg_[0-9a-f]{28}$'),
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        message text NOT NULL CHECK (char_length(message) BETWEEN 1 AND 4096),
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing', 'processed', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        characters integer,
        sha256 text,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        processed_at timestamptz,
        failed_at timestamptz
      )`);
    await q.query(`CREATE INDEX messages_account_id ON messages (account_id, id)`);
    await q.query(`CREATE INDEX messages_account_status ON messages (account_id, status, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE messages`);
  }
}
