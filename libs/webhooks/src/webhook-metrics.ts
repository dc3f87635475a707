import { Counter } from 'prom-client';

export type WebhookOutcome = 'delivered' | 'retry' | 'failed' | 'refused';

let deliveries: Counter<'outcome'> | undefined;

/** Created by the worker, never the API (no idle copy); every outcome at 0, so a first failure is an increase. */
export function webhookDeliveries(): Counter<'outcome'> {
  if (!deliveries) {
    deliveries = new Counter({
      name: 'petstore_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retry, failed (given up), refused (SSRF guard)',
      labelNames: ['outcome'] as const,
    });
    for (const outcome of ['delivered', 'retry', 'failed', 'refused'] satisfies WebhookOutcome[]) {
      deliveries.inc({ outcome }, 0);
    }
  }
  return deliveries;
}
