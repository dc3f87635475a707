import { PoolClient, QueryResultRow } from 'pg';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { Sql } from './sql';

/** Statement names by text. Callers build texts from fixed fragments only, so this stays small. */
const names = new Map<string, string>();
let named = true;

// Off behind a transaction-mode pooler (PgBouncer before 1.21): the next transaction's server connection may not
// have prepared the statement, or have another under its name.
export function useNamedStatements(on: boolean): void {
  named = on;
}

// Named, so each connection parses and plans it once (TypeORM's query() sends it unnamed). `text` must not embed
// values, and must list its columns, so a migration that adds columns leaves the cached plans valid.
export async function preparedQuery<T extends QueryResultRow>(
  db: DataSource | EntityManager,
  query: Sql<T>,
): Promise<T[]> {
  const text = query.text;
  const values = query.values as unknown[];
  let name = named ? names.get(text) : undefined;
  if (named && !name) names.set(text, (name = `petstore_${names.size + 1}`));
  const held = db instanceof DataSource ? undefined : db.queryRunner;
  const runner: QueryRunner = held ?? (db instanceof DataSource ? db : db.connection).createQueryRunner();
  try {
    // connect() returns the connection the runner holds, taking one from the pool first if needed.
    const client = (await runner.connect()) as PoolClient;
    return (await client.query<T>({ name, text, values })).rows;
  } finally {
    if (!held) await runner.release();
  }
}

/** Unnamed, so Postgres plans it with its values on every call: for a search whose best plan depends on the pattern. */
export function queryPlannedPerCall<T extends QueryResultRow>(
  db: DataSource | EntityManager,
  query: Sql<T>,
): Promise<T[]> {
  return db.query(query.text, query.values as unknown[]);
}
