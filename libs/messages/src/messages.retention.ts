import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { RetentionSource } from '@app/jobs';

/**
 * Messages in a final state (processed, failed), RETENTION_MESSAGES_DAYS after they were
 * accepted; with each its event sequence counter, which no event will use again.
 */
@Injectable()
@RetentionSource()
export class MessagesRetentionSource implements RetentionSource {
  readonly name = 'messages';
  readonly removeSql = `WITH gone AS (
      DELETE FROM messages WHERE id = ANY(ARRAY(
        SELECT id FROM messages
         WHERE status IN ('processed', 'failed') AND created_at < now() - make_interval(secs => $1::double precision * 86400)
         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))
      RETURNING account_id, id),
    counters AS (
      DELETE FROM event_sequences s USING gone
       WHERE s.account_id = gone.account_id AND s.resource_type = 'message' AND s.resource_id = gone.id)
    SELECT count(*)::int AS removed FROM gone`;

  keepDays(config: AppConfig): number {
    return config.retention.messagesDays;
  }
}
