import { RetentionSource } from '@app/jobs';
import { eventQueries } from './events.queries';

/** Deliveries have partitions of their own, kept no longer than the events (the config refuses more). */
export const eventsRetention: RetentionSource = {
  name: 'events',
  keepDays: (config) => config.retention.eventsDays,
  partitioned: {
    table: 'events',
    column: 'id',
    key: 'time-ordered-id',
    sequence: 'events_id_seq',
    openRows: eventQueries.openRows().text,
  },
};
