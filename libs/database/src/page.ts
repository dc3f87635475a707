import { raw, Sql, sql } from './sql';

export interface Page {
  limit: number;
  after?: number;
}

/** A keyset page's WHERE and ORDER BY, spliced into the caller's statement. */
export interface PageSql {
  where: Sql;
  orderBy: Sql;
}

// For unpartitioned tables: ordered by (account_id, id), which only the account's index yields, so the
// planner cannot walk the primary key from its start to a deep cursor (docs/internals/decisions/0006-keyset-pages-by-account.md).
export function accountPage(alias: string, accountId: number, after: number | string): PageSql {
  const [account, id] = [raw(`${alias}.account_id`), raw(`${alias}.id`)];
  return {
    where: sql`(${account}, ${id}) > (${accountId}, ${after}) AND ${account} <= ${accountId}`,
    orderBy: sql`ORDER BY ${account}, ${id}`,
  };
}

export type FeedOrder = 'oldest' | 'newest';

// With `scope = $1` the order is the id's alone, so partitions by id are read in order up to a full page, and those
// before the cursor are pruned; no index of the id alone exists to walk instead (docs/internals/decisions/0021-tenant-leading-keys.md).
export function feedPage(
  alias: string,
  scope: string,
  scopeId: number,
  order: FeedOrder,
  after: number | string | undefined,
): PageSql {
  const [s, id] = [raw(`${alias}.${scope}`), raw(`${alias}.id`)];
  const inScope = sql`${s} = ${scopeId}`;
  const newest = order === 'newest';
  return {
    where:
      after === undefined
        ? inScope
        : newest
          ? sql`${inScope} AND ${id} < ${after}`
          : sql`${inScope} AND ${id} > ${after}`,
    orderBy: newest ? sql`ORDER BY ${id} DESC` : sql`ORDER BY ${id}`,
  };
}
