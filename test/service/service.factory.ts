import { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccountsService, ApiKeysService, IssuedApiKey, OWNER_SCOPES, Plan, Scope } from '@app/access';
import { CategoriesService, CategoryView, NewPet, PetsService, PetView } from '@app/catalog';
import { Clock } from '@app/config';
import { preparedQuery } from '@app/database';
import { DomainEventType } from '@app/events';
import { InventoryService, OrdersService, OrderView } from '@app/store';
import { FannedOutDelivery, webhookDeliveryQueries, WebhooksService, WebhookView } from '@app/webhooks';
import { featureModulesAt } from './feature-modules';

type Feature = Type | DynamicModule;

/**
 * Rows for service specs, made through the feature services on the real Postgres and Redis, with defaults a test
 * overrides where its rule needs. Each test makes its own account (`account()`), so no test sees another's rows;
 * a row's other parents (a pet's category, an order's pet) are made for it unless given.
 */
export class ServiceFactory {
  private made = 0;
  /** Each account's default category, made by its first pet that names none. */
  private readonly defaultCategories = new Map<number, Promise<number>>();

  private constructor(readonly app: INestApplicationContext) {}

  /** The platform and `features` (test/service/feature-modules.ts) with the system clock. */
  static start(...features: Feature[]): Promise<ServiceFactory> {
    return ServiceFactory.startAt(new Clock(), ...features);
  }

  /** The same, with `clock` as every service's time. */
  static async startAt(clock: Clock, ...features: Feature[]): Promise<ServiceFactory> {
    return new ServiceFactory(await featureModulesAt(clock, ...features));
  }

  get db(): DataSource {
    return this.app.get(DataSource);
  }

  get<T>(type: Type<T>): T {
    return this.app.get(type);
  }

  close(): Promise<void> {
    return this.app.close();
  }

  /** A fresh account (with its owner's key, as AccountsService makes every account); answers its id. */
  async account(overrides: { plan?: Plan; name?: string } = {}): Promise<number> {
    const name = overrides.name ?? this.unique('account');
    const { account } = await this.get(AccountsService).create(name, overrides.plan ?? 'business');
    return account.id;
  }

  /** A key of the account; by default one of read and write without admin. */
  apiKey(
    accountId: number,
    overrides: { name?: string; scopes?: Scope[]; expiresAt?: Date } = {},
  ): Promise<IssuedApiKey> {
    return this.get(ApiKeysService).create(accountId, {
      name: overrides.name ?? this.unique('key'),
      scopes: overrides.scopes ?? ['read', 'write'],
      expiresAt: overrides.expiresAt,
    });
  }

  category(accountId: number, overrides: { name?: string; description?: string } = {}): Promise<CategoryView> {
    return this.get(CategoriesService).create(accountId, { name: this.unique('category'), ...overrides });
  }

  /** A pet (in the account's default category unless given); `stock` sets its inventory (StoreModule) after. */
  async pet(accountId: number, overrides: Partial<NewPet> & { stock?: number } = {}): Promise<PetView> {
    const { stock, ...dto } = overrides;
    const categoryId = dto.categoryId ?? (await this.defaultCategory(accountId));
    const pet = await this.get(PetsService).create(accountId, { name: this.unique('pet'), ...dto, categoryId });
    if (stock === undefined) return pet;
    const { status } = await this.get(InventoryService).set(accountId, pet.id, stock);
    return { ...pet, status };
  }

  /** An order of one unit, of a new pet with just the units ordered unless a pet is given. */
  async order(
    accountId: number,
    overrides: { petId?: number; quantity?: number; shipDate?: string } = {},
  ): Promise<OrderView> {
    const quantity = overrides.quantity ?? 1;
    const petId = overrides.petId ?? (await this.pet(accountId, { stock: quantity })).id;
    return this.get(OrdersService).place(accountId, { ...overrides, petId, quantity });
  }

  /** A webhook on pet.created made by an owner's key (`admin`): `scopes` are the creating key's. */
  webhook(
    accountId: number,
    overrides: { url?: string; events?: DomainEventType[]; description?: string; scopes?: readonly Scope[] } = {},
  ): Promise<WebhookView & { secret: string }> {
    const { scopes = OWNER_SCOPES, ...input } = overrides;
    return this.get(WebhooksService).create(
      accountId,
      { url: 'https://example.com/hook', events: ['pet.created'], ...input },
      scopes,
    );
  }

  /** A recorded event not fanned out yet, as a unit of work leaves it (with empty data); answers its id. */
  async event(accountId: number, overrides: { type?: DomainEventType; adminOnly?: boolean } = {}): Promise<number> {
    const type = overrides.type ?? 'pet.created';
    const [{ id }] = await this.db.query(
      `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out, admin_only)
       VALUES ($1, $2, $3, $4, 1, '{}', false, $5) RETURNING id::text`,
      [accountId, type, type.split('.')[0], this.unique('resource'), overrides.adminOnly ?? false],
    );
    return Number(id);
  }

  /** The fan-out of the account's `eventIds`: a delivery per subscribed webhook, as the worker's fan-out job makes. */
  fanOut(accountId: number, eventIds: number[]): Promise<FannedOutDelivery[]> {
    return preparedQuery<FannedOutDelivery>(
      this.db,
      webhookDeliveryQueries.fanOut({
        eventIds,
        accountIds: eventIds.map(() => accountId),
        traceparents: eventIds.map(() => null),
      }),
    );
  }

  /** A delivery to the webhook of a new event of `type`, left `status` (as a sender would after its attempts). */
  async delivery(
    accountId: number,
    webhookId: number,
    overrides: { type?: DomainEventType; status?: 'pending' | 'delivered' | 'failed' } = {},
  ): Promise<FannedOutDelivery> {
    const made = await this.fanOut(accountId, [await this.event(accountId, { type: overrides.type })]);
    const delivery = made.find((d) => Number(d.webhookId) === webhookId);
    if (!delivery) throw new Error(`webhook ${webhookId} does not receive ${overrides.type ?? 'pet.created'}`);
    await this.db.query(`UPDATE webhook_deliveries SET status = $1 WHERE account_id = $2 AND id = $3`, [
      overrides.status ?? 'pending',
      accountId,
      delivery.id,
    ]);
    return delivery;
  }

  private defaultCategory(accountId: number): Promise<number> {
    let id = this.defaultCategories.get(accountId);
    if (!id) {
      id = this.category(accountId).then((c) => c.id);
      this.defaultCategories.set(accountId, id);
    }
    return id;
  }

  private unique(kind: string): string {
    return `${kind} ${process.pid}-${++this.made}`;
  }
}
