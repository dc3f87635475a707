/** A keyset page over integer ids: `limit` rows after the id `after`. */
export interface Page {
  limit: number;
  after?: number;
}

/**
 * The condition and order of a keyset page inside one account, for the table aliased `alias`
 * ($1 the account, $2 the cursor id). Written as a row comparison on (account_id, id) with
 * account_id bounded above by $1, which only an index leading with account_id serves, in the
 * order the page needs. The plain `account_id = $1 AND id > $2 ORDER BY id` let a generic plan
 * walk the primary key through every tenant's rows: 28 ms for a tenant of 200 pets behind one of
 * 300,000, against 0.07 ms this way (test/tenant-isolation.e2e-spec.ts keeps it so).
 */
export function accountPage(alias: string): { where: string; orderBy: string } {
  return {
    where: `(${alias}.account_id, ${alias}.id) > ($1, $2) AND ${alias}.account_id <= $1`,
    orderBy: `ORDER BY ${alias}.account_id, ${alias}.id`,
  };
}

/** Which end of a feed (events, messages, deliveries) a page starts from. */
export type FeedOrder = 'oldest' | 'newest';

/**
 * accountPage for a feed that can also be read newest first, with its parameters: $1 the
 * account, then $2 the cursor (absent on the first newest-first page). The same index serves
 * both directions, walked backwards for `newest`.
 */
export function accountFeedPage(
  alias: string,
  accountId: number,
  order: FeedOrder,
  after: number | string | undefined,
  first: number | string,
): { where: string; orderBy: string; params: unknown[] } {
  if (order === 'oldest') return { ...accountPage(alias), params: [accountId, after ?? first] };
  const orderBy = `ORDER BY ${alias}.account_id DESC, ${alias}.id DESC`;
  if (after === undefined) return { where: `${alias}.account_id = $1`, orderBy, params: [accountId] };
  return {
    where: `(${alias}.account_id, ${alias}.id) < ($1, $2) AND ${alias}.account_id >= $1`,
    orderBy,
    params: [accountId, after],
  };
}
