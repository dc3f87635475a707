import { RetentionSource } from '@app/jobs';
import { usageHourQueries } from './usage.queries';

/** The 24-hour view needs one day of minutes. */
export const usageMinutesRetention: RetentionSource = {
  name: 'usage_minutes',
  keepDays: (config) => config.retention.usageMinutesDays,
  partitioned: { table: 'usage_minutes', column: 'minute', key: 'timestamp' },
};

/** A small table (24 rows a day per key), removed in batches by its age index. */
export const usageHoursRetention: RetentionSource = {
  name: 'usage_hours',
  keepDays: (config) => config.retention.usageHoursDays,
  remove: usageHourQueries.remove,
};
