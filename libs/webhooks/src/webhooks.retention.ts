import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';
import { webhookAttemptQueries, webhookDeliveryQueries } from './webhooks.queries';

@Injectable()
@RetentionSource()
export class WebhookDeliveriesRetentionSource implements RetentionSource {
  readonly name = 'webhook_deliveries';
  readonly partitioned: PartitionedHistory = {
    table: 'webhook_deliveries',
    column: 'id',
    key: 'time-ordered-id',
    sequence: 'webhook_deliveries_id_seq',
    openRows: webhookDeliveryQueries.openRows().text,
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
  readonly remove = webhookAttemptQueries.remove;

  keepDays(config: AppConfig): number {
    return config.retention.webhookDeliveriesDays;
  }
}
