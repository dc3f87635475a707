import { MigrationInterface, QueryRunner } from 'typeorm';

// A group commit's messages share one process job (ProcessMessagesJob), named after the first: the others keep its
// id, so the lost-job sweep asks BullMQ for the job that holds them. Nullable without a default: no partition is
// rewritten, and the rows written before it have jobs of their own.
export class MessageBatchJobs1765000000000 implements MigrationInterface {
  name = 'MessageBatchJobs1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN job_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN job_id`);
  }
}
