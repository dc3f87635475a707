import { WebhookStatus } from './webhook.entity';
import type { Webhook } from './webhooks.queries';

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
