export type WebhookStatus = 'active' | 'disabled';

/**
 * A receiver URL subscribed to event types. The signing secret cannot be hashed (the worker
 * signs every delivery with it): it is stored sealed with AES-256-GCM under WEBHOOK_SECRET_KEYS
 * (libs/webhooks/src/secret-box.ts), never logged nor shown again.
 */
export interface Webhook {
  id: number;
  accountId: number;
  url: string;
  events: string[];
  description: string | null;
  status: WebhookStatus;
  disabledAt: Date | null;
  /** Until then deliveries are also signed with the secret a rotation replaced. */
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
}

/** A webhook with its sealed signing secret: read only by the worker, to sign a delivery. */
export interface SealedWebhook extends Webhook {
  secret: string;
  /** The secret before the last rotation, sealed the same way; used until previousSecretExpiresAt. */
  previousSecret: string | null;
}
