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
    createdAt: isoOf(e.createdAt),
  };
}

/** row_to_json's UTC spelling with ms or finer (`…T07:20:00.123456+00:00`), cut as toISOString would spell it. */
const JSON_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3,6}\+00:00$/;

/** A webhook's event comes as row_to_json text: most are respelled without a Date (V8 parses this form slowly). */
function isoOf(at: Date | string): string {
  return typeof at === 'string' && JSON_UTC.test(at) ? `${at.slice(0, 23)}Z` : new Date(at).toISOString();
}
