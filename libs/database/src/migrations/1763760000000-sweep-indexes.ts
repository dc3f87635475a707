import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partial indexes over what the worker's lost-job sweep looks for in messages and webhook
 * deliveries (open orders have had theirs since the store migration), so each pass reads the
 * few open rows instead of scanning tables that only grow. Built CONCURRENTLY, outside a
 * transaction, so a deploy onto a large database does not block writes while they build.
 */
export class SweepIndexes1763760000000 implements MigrationInterface {
  name = 'SweepIndexes1763760000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_unfinished ON messages (id) WHERE status IN ('queued', 'processing')`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_pending ON webhook_deliveries (id) WHERE status = 'pending'`,
    );
  }

  // Plain DROP: TypeORM reverts inside a transaction whatever `transaction` says, and dropping is quick.
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_pending`);
    await q.query(`DROP INDEX IF EXISTS messages_unfinished`);
  }
}
