import { columns, sql } from '@app/database';
import { RemoveBatch, retentionQueries } from '@app/jobs';
import type { KeyCounts, UsageGranularity } from './usage-time';

// Every statement of the usage library: per-key counts by minute and by hour.

/** Per-key minutes, one array per column (unnest). */
export interface MinuteRows {
  accountIds: number[];
  minutes: Date[];
  keyIds: number[];
  admitted: number[];
  refused: number[];
  bans: number[];
}

export interface CountsRow extends KeyCounts {
  start: Date;
}

/** The whole account's when `keyId` is null. */
export interface CountsRange {
  accountId: number;
  from: Date;
  to: Date;
  keyId: number | null;
}

const COUNTS_COLUMNS = columns<CountsRow>({ start: true, admitted: true, refused: true, bans: true });

/** The key's rows, or the whole account's when `keyId` is null. */
const ofKey = (keyId: number | null) => sql`(${keyId}::bigint IS NULL OR key_id = ${keyId})`;

export const usageMinuteQueries = {
  /** Set to the hash's counts, never added to: a minute copied again writes the same numbers. */
  upsert: (rows: MinuteRows) => sql`
  INSERT INTO usage_minutes (account_id, minute, key_id, admitted, refused, bans)
  SELECT u.* FROM unnest(${rows.accountIds}::bigint[], ${rows.minutes}::timestamptz[], ${rows.keyIds}::bigint[], ${rows.admitted}::int[], ${rows.refused}::int[], ${rows.bans}::int[])
           AS u(account_id, minute, key_id, admitted, refused, bans)
   WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.id = u.account_id)
  ON CONFLICT (account_id, minute, key_id) DO UPDATE
     SET admitted = EXCLUDED.admitted, refused = EXCLUDED.refused, bans = EXCLUDED.bans`,
  counts: (r: CountsRange) =>
    sql`SELECT minute AS start, sum(admitted)::int AS admitted, sum(refused)::int AS refused,
         sum(bans)::int AS bans
    FROM usage_minutes
   WHERE account_id = ${r.accountId} AND minute >= ${r.from} AND minute < ${r.to} AND ${ofKey(r.keyId)}
   GROUP BY minute`.returns(COUNTS_COLUMNS),
};

export const usageHourQueries = {
  /** Each touched hour again from its minutes: the same answer however often it runs. */
  rollUp: (accountIds: readonly number[], from: Date, to: Date) => sql`
  INSERT INTO usage_hours (account_id, hour, key_id, admitted, refused, bans)
  SELECT account_id, date_trunc('hour', minute, 'UTC'), key_id, sum(admitted), sum(refused), sum(bans)
    FROM usage_minutes
   WHERE account_id = ANY(${accountIds}::bigint[]) AND minute >= ${from} AND minute < ${to}
   GROUP BY 1, 2, 3
  ON CONFLICT (account_id, hour, key_id) DO UPDATE
     SET admitted = EXCLUDED.admitted, refused = EXCLUDED.refused, bans = EXCLUDED.bans`,
  /** Summed into buckets of `granularity` (hour or day, in UTC). */
  counts: (r: CountsRange, granularity: Exclude<UsageGranularity, 'minute'>) =>
    sql`SELECT date_trunc(${granularity}, hour, 'UTC') AS start, sum(admitted)::int AS admitted,
         sum(refused)::int AS refused, sum(bans)::int AS bans
    FROM usage_hours
   WHERE account_id = ${r.accountId} AND hour >= ${r.from} AND hour < ${r.to} AND ${ofKey(r.keyId)}
   GROUP BY 1`.returns(COUNTS_COLUMNS),
  remove: (batch: RemoveBatch) => retentionQueries.batchRemove('usage_hours', 'hour', batch),
};
