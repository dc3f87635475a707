import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { RetentionSource } from '@app/jobs';

/**
 * Events handed to their webhooks (fanned out), RETENTION_EVENTS_DAYS after they happened; their
 * deliveries go with them (ON DELETE CASCADE), all final by then (the config keeps the events
 * longer than WEBHOOK_MAX_AGE_SECONDS).
 */
@Injectable()
@RetentionSource()
export class EventsRetentionSource implements RetentionSource {
  readonly name = 'events';
  readonly removeSql = `WITH gone AS (
      DELETE FROM events WHERE id = ANY(ARRAY(
        SELECT id FROM events
         WHERE fanned_out AND created_at < now() - make_interval(secs => $1::double precision * 86400)
         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))
      RETURNING 1)
    SELECT count(*)::int AS removed FROM gone`;

  keepDays(config: AppConfig): number {
    return config.retention.eventsDays;
  }
}
