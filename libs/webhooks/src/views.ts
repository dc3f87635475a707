import { WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEntity, WebhookStatus } from './webhook.entity';

/** Columns of a Webhook but its secret, for a webhooks table aliased `w`. */
export const WEBHOOK_COLUMNS = `w.id, w.account_id AS "accountId", w.url, w.events, w.description, w.status,
  w.disabled_at AS "disabledAt", w.previous_secret_expires_at AS "previousSecretExpiresAt", w.created_at AS "createdAt",
  w.created_by_admin AS "createdByAdmin"`;
export type Webhook = Omit<WebhookEntity, 'secret' | 'previousSecret'>;

/** Columns of a WebhookDelivery, for a webhook_deliveries table aliased `d`. */
export const DELIVERY_COLUMNS = `d.id, d.webhook_id AS "webhookId", d.account_id AS "accountId", d.event_id AS "eventId",
  d.event_type AS "eventType", d.status, d.attempts, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
  d.last_duration_ms AS "lastDurationMs", d.last_response_excerpt AS "lastResponseExcerpt", d.resend_of AS "resendOf",
  d.last_attempt_at AS "lastAttemptAt", d.next_attempt_at AS "nextAttemptAt", d.delivered_at AS "deliveredAt",
  d.created_at AS "createdAt"`;
export type WebhookDelivery = Omit<WebhookDeliveryEntity, 'traceparent'>;

/** A delivery's created_at as DeliverWebhookBatchJob's key: microseconds since the epoch (exact: extract is numeric). */
export const CREATED_AT_US = `(extract(epoch FROM d.created_at) * 1000000)::bigint::text AS "createdAtUs"`;

/** A webhook as API users see it: never its secret. */
export interface WebhookView {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  status: WebhookStatus;
  disabledAt: string | null;
  /** Until then deliveries also carry a signature under the secret the last rotation replaced. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
}

export function toWebhookView(w: Webhook): WebhookView {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    status: w.status,
    disabledAt: w.disabledAt ? new Date(w.disabledAt).toISOString() : null,
    previousSecretExpiresAt:
      w.previousSecretExpiresAt && new Date(w.previousSecretExpiresAt) > new Date()
        ? new Date(w.previousSecretExpiresAt).toISOString()
        : null,
    createdAt: new Date(w.createdAt).toISOString(),
  };
}
