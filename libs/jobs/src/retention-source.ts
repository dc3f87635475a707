import { DiscoveryService } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { HistoryTable } from '@app/database';

/** A time-partitioned table (docs/storage.md): retention drops its partitions whole, never rows. */
export interface PartitionedHistory extends HistoryTable {
  /**
   * Rows that keep their partition however old (not final yet), as a condition on the table,
   * served by a partial index: a partition is dropped only once it has none.
   */
  readonly openRows?: string;
  /** A statement run before the partition (the table named) is dropped: what goes with its rows. */
  beforeDrop?(partition: string): string;
}

/**
 * Records of one table that retention removes once they are past their time. Each feature
 * registers the sources of the tables it owns (a provider marked @RetentionSource()); the
 * retention job only runs them.
 */
export interface RetentionSource {
  /** The metrics label (petstore_retention_removed_total{source}, petstore_retention_partitions_dropped_total{source}). */
  readonly name: string;
  /** How long a finished record is kept, in days, fractions allowed (AppConfig.retention). */
  keepDays(config: AppConfig): number;
  /**
   * A partitioned table: the job creates its partitions ahead of time and drops those whose
   * every row is past `keepDays`.
   */
  readonly partitioned?: PartitionedHistory;
  /**
   * A table that is not partitioned: removes at most $2 records finished more than $1 days ago,
   * oldest first, and answers one row `{ removed }`. Served by a partial index over the finished
   * rows by age, and locked with SKIP LOCKED, so a batch is a short transaction that waits for
   * nobody. The batch's ids are handed to the DELETE as an array (`id = ANY(ARRAY(...))`): with
   * `id IN (...)` the planner may hash-join the whole table to the batch (it did for events).
   */
  readonly removeSql?: string;
}

export const RetentionSource = DiscoveryService.createDecorator<void>();

/**
 * removeSql for a table that is not partitioned: up to $2 rows whose `ageColumn` is more than $1
 * days old (and that satisfy `alsoWhere`, over alias `r`), handed to the DELETE by row address.
 */
export function batchRemoveSql(table: string, ageColumn: string, alsoWhere = 'true'): string {
  return `WITH gone AS (
      DELETE FROM ${table} WHERE ctid = ANY(ARRAY(
        SELECT r.ctid FROM ${table} r
         WHERE r.${ageColumn} < now() - make_interval(secs => $1::double precision * 86400) AND ${alsoWhere}
         ORDER BY r.${ageColumn} LIMIT $2 FOR UPDATE OF r SKIP LOCKED))
      RETURNING 1)
    SELECT count(*)::int AS removed FROM gone`;
}
