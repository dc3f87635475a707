import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { batchRemoveSql, PartitionedHistory, RetentionSource } from '@app/jobs';

/** Per-minute usage, RETENTION_USAGE_MINUTES_DAYS (the 24-hour view needs one day), by whole partitions of the minute. */
@Injectable()
@RetentionSource()
export class UsageMinutesRetentionSource implements RetentionSource {
  readonly name = 'usage_minutes';
  readonly partitioned: PartitionedHistory = { table: 'usage_minutes', column: 'minute', key: 'timestamp' };

  keepDays(config: AppConfig): number {
    return config.retention.usageMinutesDays;
  }
}

/**
 * Per-hour usage, RETENTION_USAGE_HOURS_DAYS (the 30-day view and day buckets): a small table (24
 * rows a day per key), removed in batches by its age index. The rows have no id: the batch hands
 * its row addresses over (`ctid = ANY(ARRAY(...))`, a TID scan).
 */
@Injectable()
@RetentionSource()
export class UsageHoursRetentionSource implements RetentionSource {
  readonly name = 'usage_hours';
  readonly removeSql = batchRemoveSql('usage_hours', 'hour');

  keepDays(config: AppConfig): number {
    return config.retention.usageHoursDays;
  }
}
