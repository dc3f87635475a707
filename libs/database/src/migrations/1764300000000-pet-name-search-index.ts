import { MigrationInterface, QueryRunner } from 'typeorm';

// account_id before the trigrams (btree_gin): a search reads the asking account's matches only. Built CONCURRENTLY
// (minutes per million pets); an invalid leftover of a failed build is dropped first.
export class PetNameSearchIndex1764300000000 implements MigrationInterface {
  name = 'PetNameSearchIndex1764300000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);
    const [invalid] = await q.query(
      `SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('pets_account_name_trgm') AND NOT indisvalid`,
    );
    if (invalid) await q.query(`DROP INDEX CONCURRENTLY pets_account_name_trgm`);
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS pets_account_name_trgm ON pets USING gin (account_id, lower(name) gin_trgm_ops)`,
    );
    // A finer histogram of names tells a substring held by 1 % of pets (walk in id order) from a rare one (read the index).
    await q.query(`ALTER INDEX pets_account_name_trgm ALTER COLUMN 2 SET STATISTICS 1000`);
  }

  // Plain DROP: TypeORM reverts inside a transaction whatever `transaction` says. btree_gin stays (harmless).
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS pets_account_name_trgm`);
  }
}
