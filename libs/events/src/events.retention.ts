import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';

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
    openRows: 'NOT fanned_out',
  };

  keepDays(config: AppConfig): number {
    return config.retention.eventsDays;
  }
}
