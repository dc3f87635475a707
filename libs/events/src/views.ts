import { JsonRow } from '@app/database';
import { DomainEventEntity } from './domain-event.entity';

/** For an events table aliased `e`. */
export const EVENT_COLUMNS = `e.id, e.account_id AS "accountId", e.type, e.resource_type AS "resourceType",
  e.resource_id AS "resourceId", e.sequence, e.data, e.created_at AS "createdAt"`;
export type DomainEvent = Omit<DomainEventEntity, 'fannedOut' | 'traceparent'>;

/** In GET /events and in webhook deliveries alike. */
export interface PublicEvent {
  id: number;
  type: string;
  resourceType: string;
  resourceId: string;
  sequence: number;
  data: Record<string, unknown>;
  createdAt: string;
}

export function toPublicEvent(e: DomainEvent | JsonRow<DomainEvent>): PublicEvent {
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
