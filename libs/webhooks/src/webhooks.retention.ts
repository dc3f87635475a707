import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';

/**
 * Deliveries, RETENTION_WEBHOOK_DELIVERIES_DAYS after they were created, by whole partitions of
 * their id, once none of a partition's deliveries is pending.
 */
@Injectable()
@RetentionSource()
export class WebhookDeliveriesRetentionSource implements RetentionSource {
  readonly name = 'webhook_deliveries';
  readonly partitioned: PartitionedHistory = {
    table: 'webhook_deliveries',
    column: 'id',
    key: 'time-ordered-id',
    sequence: 'webhook_deliveries_id_seq',
    openRows: `status = 'pending'`,
  };

  keepDays(config: AppConfig): number {
    return config.retention.webhookDeliveriesDays;
  }
}

/**
 * Attempts of deliveries no longer there, made RETENTION_WEBHOOK_DELIVERIES_DAYS ago: an attempt is
 * never older than its delivery, so they go with it (no foreign key cascades them: the deliveries
 * table is to be partitioned by time), and those of a delivery removed with its webhook or event too.
 */
@Injectable()
@RetentionSource()
export class WebhookDeliveryAttemptsRetentionSource implements RetentionSource {
  readonly name = 'webhook_delivery_attempts';
  readonly removeSql = `WITH gone AS (
      DELETE FROM webhook_delivery_attempts WHERE ctid = ANY(ARRAY(
        SELECT a.ctid FROM webhook_delivery_attempts a
         WHERE a.attempted_at < now() - make_interval(secs => $1::double precision * 86400)
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)
         ORDER BY a.attempted_at LIMIT $2 FOR UPDATE OF a SKIP LOCKED))
      RETURNING 1)
    SELECT count(*)::int AS removed FROM gone`;

  keepDays(config: AppConfig): number {
    return config.retention.webhookDeliveriesDays;
  }
}
