import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { FeedOrder, Page, preparedQuery, ReadReplicas } from '@app/database';
import { ApiError } from '@app/errors';
import { assertWithinQuota, Plan, PLAN_RECOVER_PER_CALL } from '@app/access';
import { ADMIN_EVENT_TYPES, DomainEventType, isAdminEventType } from '@app/events';
import { UnitOfWork } from '@app/transactions';
import { checkWebhookUrl, PRIVATE_TARGET, PRIVATE_TARGET_HINT, UnsafeWebhookUrl } from './address-guard';
import { WebhookSecretBox } from './secret-box';
import { generateWebhookSecret } from './signature';
import { toWebhookView, WebhookView } from './views';
import { DeliverWebhookJob } from './webhook.jobs';
import {
  DeliveryAttemptRow,
  isAdminOnlyWebhook,
  RecoverScope,
  Webhook,
  webhookAttemptQueries,
  WebhookDelivery,
  webhookDeliveryQueries,
  webhookQueries,
} from './webhooks.queries';

export interface NewWebhook {
  url: string;
  events: DomainEventType[];
  description?: string;
}

/** `description: null` removes it, `enabled` sets the status. */
export interface WebhookUpdate {
  url?: string;
  events?: DomainEventType[];
  description?: string | null;
  enabled?: boolean;
}

/** The longest rotation grace (as for API keys): the replaced secret signs deliveries until then. */
export const MAX_WEBHOOK_ROTATION_GRACE_SECONDS = 7 * 86_400;
export const DEFAULT_WEBHOOK_ROTATION_GRACE_SECONDS = 86_400;

export interface DeliveryView {
  id: number;
  webhookId: number;
  eventId: number | null;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  lastResponseExcerpt: string | null;
  resendOf: number | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/** One attempt of a delivery, as webhook_delivery_attempts keeps it. */
export type DeliveryAttemptView = Omit<DeliveryAttemptRow, 'attemptedAt'> & { attemptedAt: string };

/** Events one recover call queues at most, of any plan (PLAN_RECOVER_PER_CALL is the plan's); `more` says some are left. */
export const RECOVER_LIMIT = Math.max(...Object.values(PLAN_RECOVER_PER_CALL));

export interface RecoverResult {
  queued: number;
  /** Events it no longer receives, not resent. */
  skipped: number;
  more: boolean;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function toDeliveryView(d: WebhookDelivery): DeliveryView {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    lastDurationMs: d.lastDurationMs,
    lastResponseExcerpt: d.lastResponseExcerpt,
    resendOf: d.resendOf,
    lastAttemptAt: iso(d.lastAttemptAt),
    nextAttemptAt: iso(d.nextAttemptAt),
    deliveredAt: iso(d.deliveredAt),
    createdAt: iso(d.createdAt) as string,
  };
}

@Injectable()
export class WebhooksService {
  /** Secrets are stored sealed; the plain one is in the creation answer only. */
  private readonly secrets: WebhookSecretBox;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly replicas: ReadReplicas,
  ) {
    this.secrets = new WebhookSecretBox(config.webhookSecretKeys);
  }

  /** `scopes`: the creating key's; api_key.* events (ADMIN_EVENT_TYPES) go only to webhooks an `admin` key made. */
  async create(
    accountId: number,
    input: NewWebhook,
    scopes: readonly string[],
  ): Promise<WebhookView & { secret: string }> {
    assertMayReceive(input.events, scopes);
    const url = this.checkedUrl(input.url);
    const secret = generateWebhookSecret();
    const webhook = await this.uow.run(async (tx) => {
      await assertWithinQuota(tx.manager, accountId, 'webhooks');
      const [created] = await preparedQuery<Webhook>(
        tx.manager,
        webhookQueries.insert(accountId, {
          url: url.href,
          events: input.events,
          description: input.description ?? null,
          secret: this.secrets.seal(secret, accountId),
          createdByAdmin: isAdmin(scopes),
        }),
      );
      return created;
    });
    return { ...toWebhookView(webhook), secret };
  }

  async get(accountId: number, webhookId: number, scopes: readonly string[]): Promise<WebhookView> {
    return toWebhookView(await this.find(this.dataSource.manager, accountId, webhookId, scopes));
  }

  // A new URL passes the same check as at creation. Where api_key.* events go (its URL, its events) only an `admin`
  // key decides: the webhook's current events are checked by find(), the new ones here.
  async update(
    accountId: number,
    webhookId: number,
    input: WebhookUpdate,
    scopes: readonly string[],
  ): Promise<WebhookView> {
    if (input.events) assertMayReceive(input.events, scopes);
    const url = input.url === undefined ? null : this.checkedUrl(input.url).href;
    return this.change(accountId, webhookId, scopes, (manager) =>
      preparedQuery<Webhook>(
        manager,
        webhookQueries.update(accountId, webhookId, {
          url,
          events: input.events ?? null,
          setDescription: input.description !== undefined,
          description: input.description ?? null,
          enabled: input.enabled ?? null,
        }),
      ),
    ).then(toWebhookView);
  }

  // The replaced secret keeps signing deliveries (beside the new one) for `graceSeconds`; one replaced before is
  // dropped. A disabled webhook rotates too.
  async rotate(
    accountId: number,
    webhookId: number,
    graceSeconds: number,
    scopes: readonly string[],
  ): Promise<WebhookView & { secret: string }> {
    const secret = generateWebhookSecret();
    // Whoever holds the secret can forge deliveries: of an admin-only webhook, only an admin key.
    const rotated = await this.change(accountId, webhookId, scopes, (manager) =>
      preparedQuery<Webhook>(
        manager,
        webhookQueries.rotateSecret(accountId, webhookId, this.secrets.seal(secret, accountId), graceSeconds),
      ),
    );
    return { ...toWebhookView(rotated), secret };
  }

  // A new delivery (its own attempts and job ids) with the same webhook-id, so a receiver that deduplicates sees the
  // same message; sent even to a disabled webhook, but only of an event type it still receives.
  async resend(
    accountId: number,
    webhookId: number,
    deliveryId: number,
    scopes: readonly string[],
  ): Promise<DeliveryView> {
    const delivery = await this.uow.run(async (tx) => {
      // Shared lock: its events cannot change before the new delivery commits.
      const webhook = await this.find(tx.manager, accountId, webhookId, scopes, 'FOR SHARE');
      const eventType = await this.deliveryEventType(tx.manager, accountId, webhookId, deliveryId, scopes);
      if (eventType !== 'webhook.test' && !webhook.events.includes(eventType))
        throw new ApiError(
          'event_not_subscribed',
          `The webhook no longer receives ${eventType}; add it to its events to resend this delivery`,
        );
      const [d] = await preparedQuery<WebhookDelivery>(
        tx.manager,
        webhookDeliveryQueries.resend(accountId, webhookId, deliveryId),
      );
      if (!d) throw ApiError.notFound('Delivery');
      tx.enqueue(DeliverWebhookJob, { accountId, deliveryId: d.id, attempt: 0 });
      return d;
    });
    return toDeliveryView(delivery);
  }

  // Each event whose deliveries since `since` all failed (and, with `until`, whose first delivery was made before it) is resent once (as resend() does), the webhook re-enabled; a
  // replayed call finds them pending or delivered. The webhook row locked: two calls at once do not both resend one.
  // Bounded per call by plan, and per event by RECOVER_COOLDOWN_SECONDS (webhooks.queries.ts): a receiver that keeps
  // failing gets one more POST per event an hour at most, whatever the number of calls (docs/security.md).
  async recover(
    accountId: number,
    webhookId: number,
    window: { since: Date; until?: Date | null },
    scopes: readonly string[],
    plan: Plan,
  ): Promise<RecoverResult> {
    return this.uow.run(async (tx) => {
      const webhook = await this.find(tx.manager, accountId, webhookId, scopes, 'FOR UPDATE');
      const scope: RecoverScope = {
        accountId,
        webhookId,
        since: window.since,
        until: window.until ?? null,
        events: webhook.events,
        hiddenTypes: isAdmin(scopes) ? [] : ADMIN_EVENT_TYPES,
      };
      const resent = await preparedQuery<{ id: number }>(
        tx.manager,
        webhookDeliveryQueries.recover(scope, PLAN_RECOVER_PER_CALL[plan]),
      );
      for (const d of resent) tx.enqueue(DeliverWebhookJob, { accountId, deliveryId: d.id, attempt: 0 });
      const [left] = await preparedQuery<{ skipped: number; more: boolean }>(
        tx.manager,
        webhookDeliveryQueries.notRecovered(scope),
      );
      if (webhook.status === 'disabled') await preparedQuery(tx.manager, webhookQueries.enable(accountId, webhookId));
      return { queued: resent.length, skipped: left.skipped, more: left.more };
    });
  }

  /** The checks of the key resend() (with `deliveryId`) and recover() make, same errors: before a replay of their answer. */
  async authorize(accountId: number, webhookId: number, scopes: readonly string[], deliveryId?: number): Promise<void> {
    const manager = this.dataSource.manager;
    await this.find(manager, accountId, webhookId, scopes);
    if (deliveryId !== undefined) await this.deliveryEventType(manager, accountId, webhookId, deliveryId, scopes);
  }

  /** A key without `admin` is not shown the admin-only webhooks (they still count towards the quota). */
  async list(accountId: number, scopes: readonly string[]): Promise<WebhookView[]> {
    const rows = await preparedQuery<Webhook>(this.dataSource, webhookQueries.list(accountId, isAdmin(scopes)));
    return rows.map(toWebhookView);
  }

  // Its deliveries go with it (ON DELETE CASCADE), so queued attempts find nothing to send, and so do their attempts
  // (with the receiver's answers) now. The webhook row locked first, then its pending deliveries: no delivery can be
  // added, nor an attempt recorded, between the attempts' removal and the webhook's.
  async remove(accountId: number, webhookId: number, scopes: readonly string[]): Promise<void> {
    await this.uow.run(async (tx) => {
      await this.find(tx.manager, accountId, webhookId, scopes, 'FOR UPDATE');
      await preparedQuery(tx.manager, webhookDeliveryQueries.lockPending(accountId, webhookId));
      await preparedQuery(tx.manager, webhookAttemptQueries.deleteOfWebhook(accountId, webhookId));
      await preparedQuery(tx.manager, webhookQueries.delete(accountId, webhookId));
    });
  }

  // Deliveries that failed while it was disabled stay failed: the receiver was down for WEBHOOK_MAX_AGE_SECONDS, and
  // the events API has them all (recover() resends them).
  async enable(accountId: number, webhookId: number, scopes: readonly string[]): Promise<WebhookView> {
    const enabled = await this.change(accountId, webhookId, scopes, (manager) =>
      preparedQuery<Webhook>(manager, webhookQueries.enable(accountId, webhookId)),
    );
    return toWebhookView(enabled);
  }

  /** limit + 1 rows: the extra one tells the controller another page exists. Without `admin`, no api_key.* ones. */
  async deliveries(
    accountId: number,
    webhookId: number,
    q: Page & { order?: FeedOrder },
    scopes: readonly string[],
  ): Promise<DeliveryView[]> {
    await this.find(this.dataSource.manager, accountId, webhookId, scopes);
    // A debugging view: a delivery attempted moments ago may show on the next call.
    const rows = await preparedQuery<WebhookDelivery>(
      this.replicas.forStaleRead(),
      webhookDeliveryQueries.page(
        webhookId,
        { order: q.order ?? 'oldest', after: q.after, limit: q.limit + 1 },
        isAdmin(scopes) ? null : ADMIN_EVENT_TYPES,
      ),
    );
    return rows.map(toDeliveryView);
  }

  /** limit + 1 attempts after attempt number `after`, oldest first; 404 for a delivery not of this webhook and account. */
  async attempts(
    accountId: number,
    webhookId: number,
    deliveryId: number,
    q: Page,
    scopes: readonly string[],
  ): Promise<DeliveryAttemptView[]> {
    const manager = this.dataSource.manager;
    await this.find(manager, accountId, webhookId, scopes);
    await this.deliveryEventType(manager, accountId, webhookId, deliveryId, scopes);
    // As the deliveries list: an attempt made moments ago may show on the next call.
    const rows = await preparedQuery<DeliveryAttemptRow>(
      this.replicas.forStaleRead(),
      webhookAttemptQueries.page(accountId, deliveryId, q.after ?? 0, q.limit + 1),
    );
    return rows.map((a) => ({ ...a, attemptedAt: new Date(a.attemptedAt).toISOString() }));
  }

  /** A single attempt, no retries; answers at once. */
  async test(accountId: number, webhookId: number, scopes: readonly string[]): Promise<DeliveryView> {
    const delivery = await this.uow.run(async (tx) => {
      await this.find(tx.manager, accountId, webhookId, scopes);
      const [d] = await preparedQuery<WebhookDelivery>(
        tx.manager,
        webhookDeliveryQueries.insertTest(accountId, webhookId),
      );
      tx.enqueue(DeliverWebhookJob, { accountId, deliveryId: d.id, attempt: 0 });
      return d;
    });
    return toDeliveryView(delivery);
  }

  /** `update` runs on the row find() checked, locked until it commits, so the check holds for what it changes. */
  private change(
    accountId: number,
    webhookId: number,
    scopes: readonly string[],
    update: (manager: EntityManager) => Promise<Webhook[]>,
  ): Promise<Webhook> {
    return this.uow.run(async (tx) => {
      await this.find(tx.manager, accountId, webhookId, scopes, 'FOR UPDATE');
      const [changed] = await update(tx.manager);
      return changed;
    });
  }

  /** No DNS lookup here: the answer must not tell what a host name resolves to (the worker checks each delivery). */
  private checkedUrl(raw: string): URL {
    try {
      return checkWebhookUrl(raw, this.config.webhooks.allowPrivateUrls);
    } catch (err) {
      if (!(err instanceof UnsafeWebhookUrl)) throw err;
      // The field's reason stays short; the message says where to go from there.
      if (err.message === PRIVATE_TARGET)
        throw new ApiError('validation_failed', `url: ${PRIVATE_TARGET}. ${PRIVATE_TARGET_HINT}`, [
          { field: 'url', message: PRIVATE_TARGET },
        ]);
      throw ApiError.validation('url', err.message);
    }
  }

  /** The webhook, if this key may read and change it: an admin-only one needs `admin` (403 after the 404). */
  private async find(
    manager: EntityManager,
    accountId: number,
    webhookId: number,
    scopes: readonly string[],
    lock: '' | 'FOR SHARE' | 'FOR UPDATE' = '',
  ): Promise<Webhook> {
    const [w] = await preparedQuery<Webhook>(manager, webhookQueries.find(accountId, webhookId, lock));
    if (!w) throw ApiError.notFound('Webhook');
    if (isAdmin(scopes) || !isAdminOnlyWebhook(w)) return w;
    // The same words whatever makes it admin-only: the answer must not tell a key without admin what it receives.
    throw new ApiError(
      'insufficient_scope',
      'This webhook is visible to admin keys only, and this API key lacks the admin scope',
    );
  }

  /** The event type of a delivery of this webhook; one of an api_key.* event needs `admin`. */
  private async deliveryEventType(
    manager: EntityManager,
    accountId: number,
    webhookId: number,
    deliveryId: number,
    scopes: readonly string[],
  ): Promise<string> {
    const [delivery] = await preparedQuery<{ eventType: string }>(
      manager,
      webhookDeliveryQueries.eventType(accountId, webhookId, deliveryId),
    );
    if (!delivery) throw ApiError.notFound('Delivery');
    // Not named: the key is not shown which api_key.* event it was.
    if (isAdminEventType(delivery.eventType) && !isAdmin(scopes))
      throw new ApiError(
        'insufficient_scope',
        'This delivery is visible to admin keys only, and this API key lacks the admin scope',
      );
    return delivery.eventType;
  }
}

const isAdmin = (scopes: readonly string[]) => scopes.includes('admin');

/** api_key.* events go only where an `admin` key says. */
function assertMayReceive(events: readonly DomainEventType[], scopes: readonly string[]): void {
  const adminOnly = events.filter(isAdminEventType);
  if (!adminOnly.length || isAdmin(scopes)) return;
  const message = `${adminOnly.join(', ')} need the admin scope, which this API key lacks`;
  throw new ApiError('insufficient_scope', `events: ${message}`, [{ field: 'events', message }]);
}
