import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PET_STATUSES, PetStatus } from '@app/catalog';
import { DomainEventType } from '@app/events';
import { PetSchema } from '../pets/pets.dto';

// The document is walked as plain JSON; its nodes have no useful static type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

@ApiSchema({ name: 'PetStatusChange', description: 'A pet after a status change, with the status it had before' })
export class PetStatusChangeSchema extends PetSchema {
  @ApiProperty({ enum: PET_STATUSES, enumName: 'PetStatus', description: 'The status before', example: 'available' })
  previousStatus!: PetStatus;
}

@ApiSchema({ name: 'InventoryChange', description: "A pet's stock after a change, with the stock before" })
export class InventoryChangeSchema {
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, description: 'The pet', example: 42 })
  petId!: number;
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, description: 'Units in stock now', example: 3 })
  quantity!: number;
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, description: 'Units in stock before', example: 1 })
  previousQuantity!: number;
}

@ApiSchema({ name: 'ApiKeyBan', description: 'An API key temporarily banned for exceeding its limits' })
export class ApiKeyBanSchema {
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, description: 'The key', example: 7 })
  id!: number;
  @ApiProperty({ format: 'date-time', description: 'When the ban began', example: '2026-01-15T09:30:00.000Z' })
  bannedAt!: string;
}

export const EVENT_PAYLOAD_MODELS = [PetStatusChangeSchema, InventoryChangeSchema, ApiKeyBanSchema];

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
