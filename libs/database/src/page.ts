import { raw, Sql, sql } from './sql';

export interface Page {
  limit: number;
  after?: number;
}

// Bounded above by the account, so only an index leading with account_id serves it, in page order
// (docs/internals/decisions.md, "Keyset pages").
export function accountPage(alias: string, accountId: number, after: number | string): { where: Sql; orderBy: Sql } {
  const a = raw(alias);
  return {
    where: sql`(${a}.account_id, ${a}.id) > (${accountId}, ${after}) AND ${a}.account_id <= ${accountId}`,
    orderBy: sql`ORDER BY ${a}.account_id, ${a}.id`,
  };
}

export type FeedOrder = 'oldest' | 'newest';

/** Newest first walks the same index backwards; `first` is the cursor before every id. */
export function accountFeedPage(
  alias: string,
  accountId: number,
  order: FeedOrder,
  after: number | string | undefined,
  first: number | string,
): { where: Sql; orderBy: Sql } {
  if (order === 'oldest') return accountPage(alias, accountId, after ?? first);
  const a = raw(alias);
  const orderBy = sql`ORDER BY ${a}.account_id DESC, ${a}.id DESC`;
  if (after === undefined) return { where: sql`${a}.account_id = ${accountId}`, orderBy };
  return { where: sql`(${a}.account_id, ${a}.id) < (${accountId}, ${after}) AND ${a}.account_id >= ${accountId}`, orderBy };
}
