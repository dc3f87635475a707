import { Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { HistoryTable, Sql } from '@app/database';
import { declaredProvider } from './declared-provider';

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

/** Each feature registers the sources of the tables it owns (@RetentionSource()); the retention job only runs them. */
export interface RetentionSource {
  readonly name: string;
  keepDays(config: AppConfig): number;
  readonly partitioned?: PartitionedHistory;
  /** Not partitioned: removes a batch of finished records, answering one row `{ removed }`. */
  remove?(batch: RemoveBatch): Sql<{ removed: number }>;
}

export const RetentionSource = DiscoveryService.createDecorator<void>();

/** A source as data: the provider class the retention job discovers (`usage_hours`: UsageHoursRetentionSource). */
export function retentionSource(source: RetentionSource): Type<RetentionSource> {
  return declaredProvider(source, RetentionSource(), 'RetentionSource');
}
