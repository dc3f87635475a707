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
// planner cannot walk the primary key from its start to a deep cursor (decisions.md, "Keyset pages").
export function accountPage(alias: string, accountId: number, after: number | string): PageSql {
  const [account, id] = [raw(`${alias}.account_id`), raw(`${alias}.id`)];
  return {
    where: sql`(${account}, ${id}) > (${accountId}, ${after}) AND ${account} <= ${accountId}`,
    orderBy: sql`ORDER BY ${account}, ${id}`,
  };
}

export type FeedOrder = 'oldest' | 'newest';

// `scope = $1` makes the order id's alone, so partitions by id are read in order up to a full page; the row
// comparison and the bound keep the primary key out (decisions.md, "Feed pages read partitions in order").
export function feedPage(
  alias: string,
  scope: string,
  scopeId: number,
  order: FeedOrder,
  after: number | string | undefined,
  first: number | string,
): PageSql {
  const [s, id] = [raw(`${alias}.${scope}`), raw(`${alias}.id`)];
  const inScope = sql`${s} = ${scopeId}`;
  if (order === 'oldest') {
    const cursor = after ?? first;
    return {
      where: sql`${inScope} AND (${s}, ${id}) >= (${scopeId}, ${cursor}) AND ${id} <> ${cursor} AND ${s} <= ${scopeId}`,
      orderBy: sql`ORDER BY ${id}`,
    };
  }
  const cursor =
    after === undefined
      ? sql`(${s}, ${id}) < (${scopeId + 1}, ${first})`
      : sql`(${s}, ${id}) <= (${scopeId}, ${after}) AND ${id} <> ${after}`;
  const where = sql`${inScope} AND ${cursor} AND ${s} >= ${scopeId}`;
  return { where, orderBy: sql`ORDER BY ${id} DESC` };
}
