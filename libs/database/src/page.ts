import { raw, Sql, sql } from './sql';

/** A keyset page over integer ids: `limit` rows after the id `after`. */
export interface Page {
  limit: number;
  after?: number;
}

/**
 * The condition and order of a keyset page inside one account, for the table aliased `alias`.
 * A row comparison on (account_id, id) bounded above by the account: only an index leading with
 * account_id serves it, in the page's order (the plain `account_id = $1 AND id > $2` let a generic
 * plan walk the primary key through every tenant: docs/internals/decisions.md, "Keyset pages").
 */
export function accountPage(alias: string, accountId: number, after: number | string): { where: Sql; orderBy: Sql } {
  const a = raw(alias);
  return {
    where: sql`(${a}.account_id, ${a}.id) > (${accountId}, ${after}) AND ${a}.account_id <= ${accountId}`,
    orderBy: sql`ORDER BY ${a}.account_id, ${a}.id`,
  };
}

/** Which end of a feed (events, messages, deliveries) a page starts from. */
export type FeedOrder = 'oldest' | 'newest';

/**
 * accountPage for a feed that can also be read newest first (the same index, walked backwards);
 * `first` is the cursor before every id, for the first oldest-first page.
 */
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
