import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';

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
  readonly removeSql = `WITH gone AS (
      DELETE FROM usage_hours WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM usage_hours
         WHERE hour < now() - make_interval(secs => $1::double precision * 86400)
         ORDER BY hour LIMIT $2 FOR UPDATE SKIP LOCKED))
      RETURNING 1)
    SELECT count(*)::int AS removed FROM gone`;

  keepDays(config: AppConfig): number {
    return config.retention.usageHoursDays;
  }
}
