/** Every domain event type (DESIGN.md section 10). */
export const DOMAIN_EVENT_TYPES = [
  'pet.created',
  'pet.updated',
  'pet.deleted',
  'pet.status_changed',
  'category.created',
  'category.updated',
  'category.deleted',
  'inventory.updated',
  'order.placed',
  'order.completed',
  'order.cancelled',
  'message.processed',
  'message.failed',
  'api_key.created',
  'api_key.revoked',
  'api_key.rotated',
  'api_key.banned',
  'webhook.disabled',
] as const;

export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number];

export interface NewDomainEvent {
  accountId: number;
  type: DomainEventType;
  resourceType: string;
  resourceId: string | number;
  /** Snapshot of the resource after the change (for deletions, before it). */
  data: object;
}
