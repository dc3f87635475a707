/** Every domain event type (docs/events-and-webhooks.md lists them for API users). */
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

/** Shown and delivered only to keys with the `admin` scope, the ones that manage keys. */
export const ADMIN_EVENT_TYPES: readonly DomainEventType[] = DOMAIN_EVENT_TYPES.filter((t) => t.startsWith('api_key.'));

export const isAdminEventType = (type: string): boolean => (ADMIN_EVENT_TYPES as readonly string[]).includes(type);

export interface NewDomainEvent {
  accountId: number;
  type: DomainEventType;
  resourceType: string;
  resourceId: string | number;
  /** Snapshot of the resource after the change (for deletions, before it). */
  data: object;
  /** Only where ADMIN_EVENT_TYPES go (admin keys, admin-only webhooks): its data is an admin-only resource's. */
  adminOnly?: boolean;
}
