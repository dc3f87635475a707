import { PoolClient, QueryResultRow } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { Sql } from './sql';
import { statementPool } from './statement-pool';

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
  // A transaction's statements go on the connection it holds.
  if (held) return ((await held.connect()) as PoolClient).query<T>({ name, text, values }).then((r) => r.rows);
  // Released without the error (pg-pool's query() would close the connection on a unique violation); a broken
  // connection is dropped by the pool itself.
  const client = await statementPool(db instanceof DataSource ? db : db.connection).connect();
  // A connection lost mid-statement also emits 'error' on the client: the statement's rejection reports it.
  client.on('error', ignoreLostConnection);
  try {
    return (await client.query<T>({ name, text, values })).rows;
  } finally {
    client.off('error', ignoreLostConnection);
    client.release();
  }
}

function ignoreLostConnection(): void {}

/** Unnamed, so Postgres plans it with its values on every call: for a search whose best plan depends on the pattern. */
export function queryPlannedPerCall<T extends QueryResultRow>(
  db: DataSource | EntityManager,
  query: Sql<T>,
): Promise<T[]> {
  return db.query(query.text, query.values as unknown[]);
}
