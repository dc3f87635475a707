import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';
import { eventQueries } from './events.queries';

/** Deliveries have partitions of their own, kept no longer than the events (the config refuses more). */
@Injectable()
@RetentionSource()
export class EventsRetentionSource implements RetentionSource {
  readonly name = 'events';
  readonly partitioned: PartitionedHistory = {
    table: 'events',
    column: 'id',
    key: 'time-ordered-id',
    sequence: 'events_id_seq',
    openRows: eventQueries.openRows().text,
  };

  keepDays(config: AppConfig): number {
    return config.retention.eventsDays;
  }
}
