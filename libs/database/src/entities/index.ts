import { Account } from './account.entity';
import { ApiKey } from './api-key.entity';
import { Category } from './category.entity';
import { DomainEvent } from './domain-event.entity';
import { Order } from './order.entity';
import { Message } from './message.entity';
import { OutboxEntry } from './outbox-entry.entity';
import { Webhook } from './webhook.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { Pet } from './pet.entity';

export * from './account.entity';
export * from './api-key.entity';
export * from './domain-event.entity';
export * from './message.entity';
export * from './outbox-entry.entity';
export * from './webhook.entity';
export * from './webhook-delivery.entity';

export * from './category.entity';
export * from './pet.entity';
export * from './order.entity';

/** Every entity; features append theirs here so both apps and the CLI see one schema. */
export const ENTITIES = [
  Account,
  ApiKey,
  OutboxEntry,
  DomainEvent,
  Category,
  Pet,
  Order,
  Message,
  Webhook,
  WebhookDelivery,
];
