import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { batchRemoveSql, PartitionedHistory, RetentionSource } from '@app/jobs';

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

// An attempt is never older than its delivery, so attempts go with it (no foreign key cascades them); a deleted
// webhook's attempts are removed with it (WebhooksService.remove).
@Injectable()
@RetentionSource()
export class WebhookDeliveryAttemptsRetentionSource implements RetentionSource {
  readonly name = 'webhook_delivery_attempts';
  readonly removeSql = batchRemoveSql(
    'webhook_delivery_attempts',
    'attempted_at',
    'NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.account_id = r.account_id AND d.id = r.delivery_id)',
  );

  keepDays(config: AppConfig): number {
    return config.retention.webhookDeliveriesDays;
  }
}
