import { JsonRow } from '@app/database';
import { DomainEvent } from './events.queries';

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
