import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { RetentionSource } from '@app/jobs';

/** Deliveries delivered or given up, RETENTION_WEBHOOK_DELIVERIES_DAYS after they were created. */
@Injectable()
@RetentionSource()
export class WebhookDeliveriesRetentionSource implements RetentionSource {
  readonly name = 'webhook_deliveries';
  readonly removeSql = `WITH gone AS (
      DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY(
        SELECT id FROM webhook_deliveries
         WHERE status <> 'pending' AND created_at < now() - make_interval(secs => $1::double precision * 86400)
         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))
      RETURNING 1)
    SELECT count(*)::int AS removed FROM gone`;

  keepDays(config: AppConfig): number {
    return config.retention.webhookDeliveriesDays;
  }
}
