import { batchRemoveSql, retentionSource } from '@app/jobs';

export const WebhookDeliveriesRetentionSource = retentionSource({
  name: 'webhook_deliveries',
  keepDays: (config) => config.retention.webhookDeliveriesDays,
  partitioned: {
    table: 'webhook_deliveries',
    column: 'id',
    key: 'time-ordered-id',
    sequence: 'webhook_deliveries_id_seq',
    openRows: `status = 'pending'`,
  },
});

// An attempt is never older than its delivery, so attempts go with it (no foreign key cascades them); a deleted
// webhook's attempts are removed with it (WebhooksService.remove).
export const WebhookDeliveryAttemptsRetentionSource = retentionSource({
  name: 'webhook_delivery_attempts',
  keepDays: (config) => config.retention.webhookDeliveriesDays,
  removeSql: batchRemoveSql(
    'webhook_delivery_attempts',
    'attempted_at',
    'NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.account_id = r.account_id AND d.id = r.delivery_id)',
  ),
});
