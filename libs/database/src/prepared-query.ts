import { Pool, PoolClient, QueryResultRow } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';

/** Statement names by text. Callers build texts from fixed fragments only, so this stays small. */
const names = new Map<string, string>();

/**
 * One statement as a named (prepared) statement: each connection parses and plans it once,
 * where TypeORM's query() sends it unnamed and Postgres parses and plans it on every call
 * (half of Postgres's CPU on GET /pets/{id}, docs/benchmarks.md). On a DataSource or its
 * manager it runs on TypeORM's own pool; on a transaction's manager, on that transaction's
 * connection. `text` must not embed values (they go in `values`), and must list its columns,
 * so a migration that adds columns leaves the cached plans valid.
 */
export async function preparedQuery<T extends QueryResultRow>(
  db: DataSource | EntityManager,
  text: string,
  values: unknown[],
): Promise<T[]> {
  let name = names.get(text);
  if (!name) names.set(text, (name = `petstore_${names.size + 1}`));
  const runner = db instanceof DataSource ? undefined : (db.queryRunner as PostgresQueryRunner | undefined);
  // connect() hands back the connection the manager's runner (its transaction) already holds.
  const client: Pool | PoolClient = runner
    ? await runner.connect()
    : ((db instanceof DataSource ? db : db.connection).driver as PostgresDriver).master;
  return (await client.query<T>({ name, text, values })).rows;
}
