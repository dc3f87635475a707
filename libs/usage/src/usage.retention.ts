import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';
import { usageHourQueries } from './usage.queries';

/** The 24-hour view needs one day of minutes. */
@Injectable()
@RetentionSource()
export class UsageMinutesRetentionSource implements RetentionSource {
  readonly name = 'usage_minutes';
  readonly partitioned: PartitionedHistory = { table: 'usage_minutes', column: 'minute', key: 'timestamp' };

  keepDays(config: AppConfig): number {
    return config.retention.usageMinutesDays;
  }
}

/** A small table (24 rows a day per key), removed in batches by its age index. */
@Injectable()
@RetentionSource()
export class UsageHoursRetentionSource implements RetentionSource {
  readonly name = 'usage_hours';
  readonly remove = usageHourQueries.remove;

  keepDays(config: AppConfig): number {
    return config.retention.usageHoursDays;
  }
}
