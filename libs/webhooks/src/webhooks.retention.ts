import { RetentionSource } from '@app/jobs';
import { webhookAttemptQueries, webhookDeliveryQueries } from './webhooks.queries';

export const webhookDeliveriesRetention: RetentionSource = {
  name: 'webhook_deliveries',
  keepDays: (config) => config.retention.webhookDeliveriesDays,
  partitioned: {
    table: 'webhook_deliveries',
    column: 'id',
    key: 'time-ordered-id',
    sequence: 'webhook_deliveries_id_seq',
    openRows: webhookDeliveryQueries.openRows().text,
  },
};

// An attempt is never older than its delivery, so attempts go with it (no foreign key cascades them); a deleted
// webhook's attempts are removed with it (WebhooksService.remove).
export const webhookDeliveryAttemptsRetention: RetentionSource = {
  name: 'webhook_delivery_attempts',
  keepDays: (config) => config.retention.webhookDeliveriesDays,
  remove: webhookAttemptQueries.remove,
};
