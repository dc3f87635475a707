export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event (or test ping, eventId null) to one webhook, with its attempts so far. */
export interface WebhookDelivery {
  id: number;
  webhookId: number;
  accountId: number;
  eventId: number | null;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  /** How long the last attempt took, to the end of the answer (or the failure). */
  lastDurationMs: number | null;
  /** The first bytes of the last answer's body (RESPONSE_EXCERPT_BYTES). */
  lastResponseExcerpt: string | null;
  /** The delivery this one resends (the first of the event), or null. */
  resendOf: number | null;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
}
