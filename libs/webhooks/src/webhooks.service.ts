import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { FeedOrder, feedPage, Page, preparedQuery, raw, ReadReplicas, sql } from '@app/database';
import { ApiError } from '@app/errors';
import { assertWithinQuota } from '@app/access';
import { ADMIN_EVENT_TYPES, DomainEventType, DomainUnitOfWork, isAdminEventType } from '@app/events';
import { checkWebhookUrl, UnsafeWebhookUrl } from './address-guard';
import { WebhookSecretBox } from './secret-box';
import { generateWebhookSecret } from './signature';
import { DELIVERY_COLUMNS, toWebhookView, Webhook, WEBHOOK_COLUMNS, WebhookDelivery, WebhookView } from './views';
import { DeliverWebhookJob } from './webhook.jobs';
import { WebhookDeliveryAttemptEntity } from './webhook-delivery-attempt.entity';

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

type DeliveryAttemptRow = Omit<WebhookDeliveryAttemptEntity, 'accountId' | 'deliveryId'>;

/** One attempt of a delivery, as webhook_delivery_attempts keeps it. */
export type DeliveryAttemptView = Omit<DeliveryAttemptRow, 'attemptedAt'> & { attemptedAt: string };

/** Events one recover call queues at most; `more` says another call with the same `since` has some left. */
export const RECOVER_LIMIT = 10_000;

export interface RecoverResult {
  queued: number;
  /** Events it no longer receives, not resent. */
  skipped: number;
  more: boolean;
}

// An event's deliveries to a webhook (the first and its resends) since $3, of each event none delivered nor pending
// (retries under way), the first one included whenever it was made: it never reached the receiver. $5: the event types
// the key may not see (api_key.* without `admin`), $4: the webhook's.
const FAILED_SINCE = `failed_chains AS (
    SELECT coalesce(d.resend_of, d.id) AS first, min(d.event_id) AS event_id, min(d.event_type) AS event_type
      FROM webhook_deliveries d
     WHERE d.account_id = $1 AND d.webhook_id = $2 AND d.created_at >= $3 AND d.event_id IS NOT NULL
       AND d.event_type <> ALL ($5::text[])
     GROUP BY 1 HAVING bool_and(d.status = 'failed')),
  failed AS (
    SELECT c.first, c.event_id, c.event_type, c.event_type = ANY ($4::text[]) AS subscribed FROM failed_chains c
     WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries f WHERE f.account_id = $1 AND f.id = c.first AND f.status <> 'failed'))`;

const RECOVER_SQL = `WITH ${FAILED_SINCE}
  INSERT INTO webhook_deliveries AS d (webhook_id, account_id, event_id, event_type, resend_of)
  SELECT $2, $1, f.event_id, f.event_type, f.first FROM failed f WHERE f.subscribed ORDER BY f.first LIMIT $6
  RETURNING d.id`;

/** After RECOVER_SQL in its transaction: the events it resent have a pending delivery now. */
const NOT_RECOVERED_SQL = `WITH ${FAILED_SINCE}
  SELECT count(*) FILTER (WHERE NOT f.subscribed)::int AS skipped, coalesce(bool_or(f.subscribed), false) AS more
    FROM failed f`;

const ENABLE_SQL = `UPDATE webhooks w SET status = 'active', disabled_at = NULL WHERE w.id = $1 AND w.account_id = $2
  RETURNING ${WEBHOOK_COLUMNS}`;

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
    private readonly uow: DomainUnitOfWork,
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
        `INSERT INTO webhooks AS w (account_id, url, events, description, secret, status, created_by_admin)
         VALUES ($1, $2, $3, $4, $5, 'active', $6)
         RETURNING ${WEBHOOK_COLUMNS}`,
        [
          accountId,
          url.href,
          input.events,
          input.description ?? null,
          this.secrets.seal(secret, accountId),
          isAdmin(scopes),
        ],
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
        `UPDATE webhooks w SET url = coalesce($3, w.url), events = coalesce($4::text[], w.events),
          description = CASE WHEN $5 THEN $6 ELSE w.description END,
          status = CASE WHEN $7::boolean IS NULL THEN w.status WHEN $7 THEN 'active' ELSE 'disabled' END,
          disabled_at = CASE WHEN $7::boolean IS NULL THEN w.disabled_at WHEN $7 THEN NULL
                             ELSE coalesce(w.disabled_at, now()) END
        WHERE w.id = $1 AND w.account_id = $2
        RETURNING ${WEBHOOK_COLUMNS}`,
        [
          webhookId,
          accountId,
          url,
          input.events ?? null,
          input.description !== undefined,
          input.description ?? null,
          input.enabled ?? null,
        ],
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
        `UPDATE webhooks w SET secret = $3,
          previous_secret = CASE WHEN $4::integer > 0 THEN w.secret END,
          previous_secret_expires_at = CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END
        WHERE w.id = $1 AND w.account_id = $2
        RETURNING ${WEBHOOK_COLUMNS}`,
        [webhookId, accountId, this.secrets.seal(secret, accountId), graceSeconds],
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
        `INSERT INTO webhook_deliveries AS d (webhook_id, account_id, event_id, event_type, resend_of)
         SELECT o.webhook_id, o.account_id, o.event_id, o.event_type, coalesce(o.resend_of, o.id)
           FROM webhook_deliveries o WHERE o.id = $1 AND o.webhook_id = $2 AND o.account_id = $3
         RETURNING ${DELIVERY_COLUMNS}`,
        [deliveryId, webhookId, accountId],
      );
      if (!d) throw ApiError.notFound('Delivery');
      tx.enqueue(DeliverWebhookJob, { accountId, deliveryId: d.id, attempt: 0 });
      return d;
    });
    return toDeliveryView(delivery);
  }

  // Each event whose deliveries since `since` all failed is resent once (as resend() does), the webhook re-enabled; a
  // replayed call finds them pending or delivered. The webhook row locked: two calls at once do not both resend one.
  async recover(accountId: number, webhookId: number, since: Date, scopes: readonly string[]): Promise<RecoverResult> {
    return this.uow.run(async (tx) => {
      const webhook = await this.find(tx.manager, accountId, webhookId, scopes, 'FOR UPDATE');
      const params = [accountId, webhookId, since, webhook.events, isAdmin(scopes) ? [] : ADMIN_EVENT_TYPES];
      const resent = await preparedQuery<{ id: number }>(tx.manager, RECOVER_SQL, [...params, RECOVER_LIMIT]);
      for (const d of resent) tx.enqueue(DeliverWebhookJob, { accountId, deliveryId: d.id, attempt: 0 });
      const [left] = await preparedQuery<{ skipped: number; more: boolean }>(tx.manager, NOT_RECOVERED_SQL, params);
      if (webhook.status === 'disabled') await preparedQuery(tx.manager, ENABLE_SQL, [webhookId, accountId]);
      return { queued: resent.length, skipped: left.skipped, more: left.more };
    });
  }

  /** A key without `admin` is not shown the admin-only webhooks (they still count towards the quota). */
  async list(accountId: number, scopes: readonly string[]): Promise<WebhookView[]> {
    const rows = await preparedQuery<Webhook>(
      this.dataSource,
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks w
        WHERE w.account_id = $1 AND ($2 OR NOT (w.created_by_admin OR w.events && $3::text[]))
        ORDER BY w.id`,
      [accountId, isAdmin(scopes), ADMIN_EVENT_TYPES],
    );
    return rows.map(toWebhookView);
  }

  // Its deliveries go with it (ON DELETE CASCADE), so queued attempts find nothing to send, and so do their attempts
  // (with the receiver's answers) now. The webhook row locked first, then its pending deliveries: no delivery can be
  // added, nor an attempt recorded, between the attempts' removal and the webhook's.
  async remove(accountId: number, webhookId: number, scopes: readonly string[]): Promise<void> {
    await this.uow.run(async (tx) => {
      await this.find(tx.manager, accountId, webhookId, scopes, 'FOR UPDATE');
      await preparedQuery(
        tx.manager,
        `SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries d
          WHERE d.account_id = $1 AND d.webhook_id = $2 AND d.status = 'pending' FOR UPDATE) pending`,
        [accountId, webhookId],
      );
      await preparedQuery(
        tx.manager,
        `DELETE FROM webhook_delivery_attempts a USING webhook_deliveries d
          WHERE d.account_id = $1 AND d.webhook_id = $2 AND a.account_id = d.account_id AND a.delivery_id = d.id`,
        [accountId, webhookId],
      );
      await preparedQuery(tx.manager, `DELETE FROM webhooks WHERE id = $1 AND account_id = $2`, [webhookId, accountId]);
    });
  }

  // Deliveries that failed while it was disabled stay failed: the receiver was down for WEBHOOK_MAX_AGE_SECONDS, and
  // the events API has them all (recover() resends them).
  async enable(accountId: number, webhookId: number, scopes: readonly string[]): Promise<WebhookView> {
    const enabled = await this.change(accountId, webhookId, scopes, (manager) =>
      preparedQuery<Webhook>(manager, ENABLE_SQL, [webhookId, accountId]),
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
    const page = feedPage('d', 'webhook_id', webhookId, q.order ?? 'oldest', q.after);
    const notAdmin = isAdmin(scopes) ? raw('') : sql`AND d.event_type <> ALL(${ADMIN_EVENT_TYPES}::text[])`;
    // A debugging view: a delivery attempted moments ago may show on the next call.
    const rows = await preparedQuery<WebhookDelivery>(
      this.replicas.forStaleRead(),
      sql`SELECT ${raw(DELIVERY_COLUMNS)} FROM webhook_deliveries d
        WHERE ${page.where} ${notAdmin} ${page.orderBy} LIMIT ${q.limit + 1}`,
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
      `SELECT a.attempt, a.attempted_at AS "attemptedAt", a.status_code AS "statusCode", a.duration_ms AS "durationMs",
              a.response_excerpt AS "responseExcerpt", a.error
         FROM webhook_delivery_attempts a
        WHERE a.account_id = $1 AND a.delivery_id = $2 AND a.attempt > $3::bigint
        ORDER BY a.attempt LIMIT $4`,
      [accountId, deliveryId, q.after ?? 0, q.limit + 1],
    );
    return rows.map((a) => ({ ...a, attemptedAt: new Date(a.attemptedAt).toISOString() }));
  }

  /** A single attempt, no retries; answers at once. */
  async test(accountId: number, webhookId: number, scopes: readonly string[]): Promise<DeliveryView> {
    const delivery = await this.uow.run(async (tx) => {
      await this.find(tx.manager, accountId, webhookId, scopes);
      const [d] = await preparedQuery<WebhookDelivery>(
        tx.manager,
        `INSERT INTO webhook_deliveries AS d (webhook_id, account_id, event_id, event_type) VALUES ($1, $2, NULL, 'webhook.test')
         RETURNING ${DELIVERY_COLUMNS}`,
        [webhookId, accountId],
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
      if (err instanceof UnsafeWebhookUrl) throw ApiError.validation('url', err.message);
      throw err;
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
    const [w] = await preparedQuery<Webhook>(
      manager,
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks w WHERE w.id = $1 AND w.account_id = $2 ${lock}`,
      [webhookId, accountId],
    );
    if (!w) throw ApiError.notFound('Webhook');
    if (isAdmin(scopes)) return w;
    const keyEvents = w.events.filter(isAdminEventType);
    if (keyEvents.length || w.createdByAdmin) {
      const why = keyEvents.length ? `receives ${keyEvents.join(', ')}` : 'was made by a key with the admin scope';
      throw new ApiError(
        'insufficient_scope',
        `This webhook ${why}: only a key with the admin scope reads or changes it, and this API key lacks it`,
      );
    }
    return w;
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
      `SELECT d.event_type AS "eventType" FROM webhook_deliveries d
        WHERE d.id = $1 AND d.webhook_id = $2 AND d.account_id = $3`,
      [deliveryId, webhookId, accountId],
    );
    if (!delivery) throw ApiError.notFound('Delivery');
    if (isAdminEventType(delivery.eventType) && !isAdmin(scopes))
      throw new ApiError(
        'insufficient_scope',
        `Deliveries of ${delivery.eventType} need the admin scope, which this API key lacks`,
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
