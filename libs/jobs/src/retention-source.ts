import { AppConfig } from '@app/config';
import { HistoryTable, Sql } from '@app/database';

/** Retention drops its partitions whole, never rows (docs/storage.md). */
export interface PartitionedHistory extends HistoryTable {
  /** Rows that keep their partition however old (not final yet): a condition served by a partial index. */
  readonly openRows?: string;
  /** Run before the partition (the table named) is dropped: what goes with its rows. */
  beforeDrop?(partition: string): string;
}

/** At most `limit` records finished over `olderThanDays` ago. */
export interface RemoveBatch {
  olderThanDays: number;
  limit: number;
}

/** Each feature lists the sources of the tables it owns (WorkerFeature.retention); the retention job only runs them. */
export interface RetentionSource {
  readonly name: string;
  keepDays(config: AppConfig): number;
  readonly partitioned?: PartitionedHistory;
  /** Not partitioned: removes a batch of finished records, answering one row `{ removed }`. */
  remove?(batch: RemoveBatch): Sql<{ removed: number }>;
}
