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
