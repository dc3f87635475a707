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
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
}
