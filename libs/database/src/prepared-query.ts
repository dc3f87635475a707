import { Pool, QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/** Statement names by text. Callers build texts from fixed fragments only, so this stays small. */
const names = new Map<string, string>();

/**
 * One statement outside any transaction, as a named (prepared) statement on the data source's
 * own pool: each connection parses and plans it once, where TypeORM's query() sends it unnamed
 * and Postgres parses and plans it on every call (half of Postgres's CPU on GET /pets/{id},
 * docs/benchmarks.md). For the hottest statements. `text` must not embed values (they go in
 * `values`), and must list its columns, so a migration that adds columns leaves plans valid.
 */
export async function preparedQuery<T extends QueryResultRow>(
  dataSource: DataSource,
  text: string,
  values: unknown[],
): Promise<T[]> {
  let name = names.get(text);
  if (!name) names.set(text, (name = `petstore_${names.size + 1}`));
  const pool = (dataSource.driver as PostgresDriver).master as Pool;
  return (await pool.query<T>({ name, text, values })).rows;
}
