import { Type } from '@nestjs/common';
import { ApiSchema } from '@nestjs/swagger';
import { DomainEventType } from '@app/events';

// The document is walked as plain JSON; its nodes have no useful static type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

// The data schema of each event type, by name.
// `satisfies` makes a new event type fail to compile here.
const EVENT_DATA = {
  'pet.created': 'Pet',
  'pet.updated': 'Pet',
  'pet.deleted': 'Pet',
  'pet.status_changed': 'PetStatusChange',
  'category.created': 'Category',
  'category.updated': 'Category',
  'category.deleted': 'Category',
  'inventory.updated': 'InventoryChange',
  'order.placed': 'Order',
  'order.completed': 'Order',
  'order.cancelled': 'Order',
  'message.processed': 'MessageDetail',
  'message.failed': 'MessageDetail',
  'api_key.created': 'ApiKey',
  'api_key.revoked': 'ApiKey',
  'api_key.rotated': 'ApiKey',
  'api_key.banned': 'ApiKeyBan',
  'webhook.disabled': 'Webhook',
} satisfies Record<DomainEventType, string>;

/** A union discriminated on `type`, one variant per data schema, so generated clients narrow `data`. */
export function typeEventData(schemas: Record<string, Json>): void {
  const base = schemas.Event;
  if (!base) return;
  const byData = new Map<string, string[]>();
  for (const [type, data] of Object.entries(EVENT_DATA)) byData.set(data, [...(byData.get(data) ?? []), type]);
  const mapping: Record<string, string> = {};
  for (const [data, types] of byData) {
    const name = `${data}Event`;
    schemas[name] = {
      ...base,
      description: `An event whose \`data\` is a ${data} (${types.join(', ')})`,
      properties: {
        ...base.properties,
        type: { type: 'string', enum: types, example: types[0], description: 'What happened' },
        data: { $ref: `#/components/schemas/${data}` },
      },
    };
    for (const type of types) mapping[type] = `#/components/schemas/${name}`;
  }
  schemas.Event = {
    description: 'A domain event of the account; `type` says which schema `data` follows',
    oneOf: [...new Set(Object.values(mapping))].map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'type', mapping },
  };
}

const payloadModels = new Map<string, Type>();

/** A schema only events carry, declared beside its feature: named, and added to the document's models. */
export function EventPayloadSchema(name: string, description: string): ClassDecorator {
  return (target) => {
    ApiSchema({ name, description })(target);
    payloadModels.set(name, target as unknown as Type);
  };
}

/** The event-only schemas the loaded features declared, in the order EVENT_DATA names them. */
export function eventPayloadModels(): Type[] {
  return [...new Set(Object.values(EVENT_DATA))].flatMap((name) => payloadModels.get(name) ?? []);
}
