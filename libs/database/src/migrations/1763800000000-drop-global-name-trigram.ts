import { MigrationInterface, QueryRunner } from 'typeorm';

// A name search reads a window of the account's pets in id order: the index over every tenant's names served
// nothing and cost every pet write. pg_trgm stays (harmless).
export class DropGlobalNameTrigram1763800000000 implements MigrationInterface {
  name = 'DropGlobalNameTrigram1763800000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS pets_name_trgm`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS pets_name_trgm ON pets USING gin (lower(name) gin_trgm_ops)`);
  }
}
