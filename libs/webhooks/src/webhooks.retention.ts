import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { batchRemoveSql, PartitionedHistory, RetentionSource } from '@app/jobs';

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
  readonly removeSql = batchRemoveSql(
    'webhook_delivery_attempts',
    'attempted_at',
    'NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = r.delivery_id)',
  );

  keepDays(config: AppConfig): number {
    return config.retention.webhookDeliveriesDays;
  }
}
