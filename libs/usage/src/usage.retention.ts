import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { RetentionSource } from '@app/jobs';

/**
 * A usage table's rows older than its retention, by its age index. The rows have no id: the batch
 * hands its row addresses over (`ctid = ANY(ARRAY(...))`, a TID scan).
 */
const removeOlderThan = (table: string, column: string) => `WITH gone AS (
    DELETE FROM ${table} WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM ${table}
       WHERE ${column} < now() - make_interval(secs => $1::double precision * 86400)
       ORDER BY ${column} LIMIT $2 FOR UPDATE SKIP LOCKED))
    RETURNING 1)
  SELECT count(*)::int AS removed FROM gone`;

/** Per-minute usage, RETENTION_USAGE_MINUTES_DAYS (the 24-hour view needs one day). */
@Injectable()
@RetentionSource()
export class UsageMinutesRetentionSource implements RetentionSource {
  readonly name = 'usage_minutes';
  readonly removeSql = removeOlderThan('usage_minutes', 'minute');

  keepDays(config: AppConfig): number {
    return config.retention.usageMinutesDays;
  }
}

/** Per-hour usage, RETENTION_USAGE_HOURS_DAYS (the 30-day view and day buckets). */
@Injectable()
@RetentionSource()
export class UsageHoursRetentionSource implements RetentionSource {
  readonly name = 'usage_hours';
  readonly removeSql = removeOlderThan('usage_hours', 'hour');

  keepDays(config: AppConfig): number {
    return config.retention.usageHoursDays;
  }
}
