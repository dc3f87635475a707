import { DomainEvent, Webhook } from '@app/database';

/** An event as API users see it, in GET /events and in webhook deliveries alike. */
export interface PublicEvent {
  id: number;
  type: string;
  resourceType: string;
  resourceId: string;
  sequence: number;
  data: Record<string, unknown>;
  createdAt: string;
}

export function toPublicEvent(e: DomainEvent): PublicEvent {
  return {
    id: e.id,
    type: e.type,
    resourceType: e.resourceType,
    resourceId: e.resourceId,
    sequence: e.sequence,
    data: e.data,
    createdAt: new Date(e.createdAt).toISOString(),
  };
}

/** A webhook as API users see it: never its secret. */
export interface WebhookView {
  id: number;
  url: string;
  events: string[];
  status: 'active' | 'disabled';
  disabledAt: string | null;
  createdAt: string;
}

export function toWebhookView(w: Webhook): WebhookView {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    status: w.status,
    disabledAt: w.disabledAt ? new Date(w.disabledAt).toISOString() : null,
    createdAt: new Date(w.createdAt).toISOString(),
  };
}
