import { PoolClient, QueryResultRow } from 'pg';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { Sql } from './sql';

/** Statement names by text. Callers build texts from fixed fragments only, so this stays small. */
const names = new Map<string, string>();
let named = true;

/**
 * Off behind a transaction-mode pooler (PgBouncer before 1.21): the next transaction may run on
 * another server connection, which has not prepared the statement, or has prepared another one
 * under the same name. Unnamed statements are parsed and planned on every call, but work there.
 */
export function useNamedStatements(on: boolean): void {
  named = on;
}

/**
 * One statement as a named (prepared) statement: each connection parses and plans it once,
 * where TypeORM's query() sends it unnamed and Postgres parses and plans it on every call
 * (half of Postgres's CPU on GET /pets/{id}, docs/internals/benchmarks.md). On a transaction's
 * manager it runs on that transaction's connection; otherwise on a connection taken from
 * TypeORM's pool for the statement. Only TypeORM's public API: QueryRunner.connect() hands back
 * the driver's connection (node-postgres's client). `text` must not embed values (they go in
 * `values`), and must list its columns, so a migration that adds columns leaves the cached
 * plans valid.
 */
export async function preparedQuery<T extends QueryResultRow>(db: DataSource | EntityManager, query: Sql): Promise<T[]>;
export async function preparedQuery<T extends QueryResultRow>(
  db: DataSource | EntityManager,
  text: string,
  values: unknown[],
): Promise<T[]>;
export async function preparedQuery<T extends QueryResultRow>(
  db: DataSource | EntityManager,
  statement: string | Sql,
  params?: unknown[],
): Promise<T[]> {
  const text = typeof statement === 'string' ? statement : statement.text;
  const values = typeof statement === 'string' ? params : (statement.values as unknown[]);
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
  query: Sql,
): Promise<T[]> {
  return db.query(query.text, query.values as unknown[]);
}
