import { randomBytes } from 'node:crypto';
import { PetstoreClient } from '@petstore/client';

/** What a trigger did: the resources it made or changed, in order, and what comes later by itself. */
export interface Triggered {
  type: string;
  /** `category 3 created`, `pet 17 updated`... */
  steps: string[];
  /** Ids by name (`categoryId`, `petId`, `orderId`, `messageId`, `keyId`). */
  resources: Record<string, number | string>;
  /** Set when the event is recorded by the worker, a moment later. */
  later?: string;
}

const NAME = 'petstore trigger sample';
/** Names are unique per account (categories'): each run its own. */
const sampleName = () => `${NAME} ${randomBytes(4).toString('hex')}`;

class Run {
  readonly steps: string[] = [];
  readonly resources: Record<string, number | string> = {};
  later?: string;

  constructor(readonly client: PetstoreClient) {}

  /** `label` for the step when the id is not the one kept under `name` (a key's successor). */
  note(name: string, id: number | string, what: string, label?: string): void {
    if (label === undefined) this.resources[name] = id;
    this.steps.push(`${label ?? name.replace(/Id$/, '')} ${id} ${what}`);
  }

  /** The account's first category, else a new one. */
  async someCategory(): Promise<number> {
    const { data } = await this.client.call('GET', '/categories', { query: { limit: 1 } });
    const [first] = data;
    if (first) {
      this.note('categoryId', first.id, 'used');
      return first.id;
    }
    return this.newCategory();
  }

  async newCategory(): Promise<number> {
    const category = await this.client.categories.create({ name: sampleName() });
    this.note('categoryId', category.id, 'created');
    return category.id;
  }

  /** A new pet, available (one in stock). */
  async newPet(): Promise<number> {
    const pet = await this.client.pets.create({ name: sampleName(), categoryId: await this.someCategory() });
    this.note('petId', pet.id, 'created');
    return pet.id;
  }

  async newOrder(shipDate?: Date): Promise<number> {
    const petId = await this.newPet();
    const { id } = await this.client.orders.place({ petId, quantity: 1, shipDate: shipDate?.toISOString() });
    if (id === undefined) throw new Error('the API answered the order without its id');
    this.note('orderId', id, shipDate ? `placed (ships ${shipDate.toISOString()})` : 'placed');
    return id;
  }

  async newMessage(text: string): Promise<void> {
    const message = await this.client.messages.create({ message: text });
    this.note('messageId', message.id, 'sent');
  }

  /** A read key, revoked at once (its secret is never shown): no credential is left behind. */
  async newKey(): Promise<number> {
    const key = await this.client.keys.create({ name: sampleName(), scopes: ['read'] });
    this.note('keyId', key.id, 'created');
    return key.id;
  }

  async revokeKey(id: number, label?: string): Promise<void> {
    await this.client.keys.revoke(id);
    this.note('keyId', id, 'revoked', label);
  }
}

const tomorrow = () => new Date(Date.now() + 86_400_000);

/** The event types a key can cause through the public API, and how. */
export const TRIGGERS: Record<string, (run: Run) => Promise<void>> = {
  'category.created': async (r) => void (await r.newCategory()),
  'category.updated': async (r) => {
    const id = await r.newCategory();
    await r.client.categories.update(id, { name: `${sampleName()} (updated)` });
    r.note('categoryId', id, 'renamed');
  },
  'category.deleted': async (r) => {
    const id = await r.newCategory();
    await r.client.categories.delete(id);
    r.note('categoryId', id, 'deleted');
  },
  'pet.created': async (r) => void (await r.newPet()),
  'pet.updated': async (r) => {
    const id = await r.newPet();
    await r.client.pets.update(id, { name: `${sampleName()} (updated)` });
    r.note('petId', id, 'renamed');
  },
  'pet.deleted': async (r) => {
    const id = await r.newPet();
    await r.client.pets.delete(id);
    r.note('petId', id, 'deleted');
  },
  'pet.status_changed': async (r) => {
    const id = await r.newPet();
    await r.client.inventory.update(id, { quantity: 0 });
    r.note('petId', id, 'sold out (stock 0: available -> sold)');
  },
  'inventory.updated': async (r) => {
    const id = await r.newPet();
    await r.client.inventory.update(id, { quantity: 5 });
    r.note('petId', id, 'stock set to 5');
  },
  'order.placed': async (r) => void (await r.newOrder(tomorrow())),
  'order.cancelled': async (r) => {
    const id = await r.newOrder(tomorrow());
    await r.client.orders.cancel(id);
    r.note('orderId', id, 'cancelled');
  },
  'order.completed': async (r) => {
    await r.newOrder();
    r.later = 'order.completed comes when the worker fulfils the order (at once: no ship date)';
  },
  'message.processed': async (r) => {
    await r.newMessage(NAME);
    r.later = 'message.processed comes when the worker has processed it';
  },
  'message.failed': async (r) => {
    // The processor rejects what begins with "poison:" (POISON_PREFIX).
    await r.newMessage(`poison: ${NAME}`);
    r.later = 'message.failed comes when the worker has rejected it on its last attempt (JOB_ATTEMPTS)';
  },
  'api_key.created': async (r) => {
    await r.revokeKey(await r.newKey());
  },
  'api_key.revoked': async (r) => {
    await r.revokeKey(await r.newKey());
  },
  'api_key.rotated': async (r) => {
    const id = await r.newKey();
    const successor = await r.client.keys.rotate(id, { gracePeriodSeconds: 0 });
    r.note('keyId', id, `rotated (successor ${successor.id})`);
    await r.revokeKey(successor.id, 'successor key');
  },
};

/** Caused by the service alone: an abusive key's ban, a webhook failing for days. */
export const NOT_TRIGGERABLE: Record<string, string> = {
  'api_key.banned': 'the service bans a key that keeps breaking the rate limits',
  'webhook.disabled': 'the service disables a webhook whose deliveries keep failing',
};

/** Makes a real `type` event through the API with the key: the resources it needs, then the change. */
export async function trigger(type: string, options: { apiKey: string; baseUrl: string }): Promise<Triggered> {
  const run = new Run(new PetstoreClient({ apiKey: options.apiKey, baseUrl: options.baseUrl }));
  await TRIGGERS[type](run);
  return { type, steps: run.steps, resources: run.resources, ...(run.later ? { later: run.later } : {}) };
}
