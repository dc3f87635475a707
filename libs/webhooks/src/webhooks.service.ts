import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { FeedOrder, feedPage, Page, preparedQuery, raw, ReadReplicas, sql } from '@app/database';
import { ApiError } from '@app/errors';
import { assertWithinQuota } from '@app/access';
import { DomainEventType, isAdminEventType, TransactionService } from '@app/events';
import { resolveWebhookTarget, UnsafeWebhookUrl } from './address-guard';
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
    private readonly tx: TransactionService,
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
    const url = await this.checkedUrl(input.url, 'accept');
    const secret = generateWebhookSecret();
    const webhook = await this.tx.run(async (tx) => {
      await assertWithinQuota(tx.manager, accountId, 'webhooks');
      const [created] = await preparedQuery<Webhook>(
        tx.manager,
        `INSERT INTO webhooks AS w (account_id, url, events, description, secret, status)
         VALUES ($1, $2, $3, $4, $5, 'active')
         RETURNING ${WEBHOOK_COLUMNS}`,
        [accountId, url.href, input.events, input.description ?? null, this.secrets.seal(secret, accountId)],
      );
      return created;
    });
    return { ...toWebhookView(webhook), secret };
  }

  async get(accountId: number, webhookId: number): Promise<WebhookView> {
    return toWebhookView(await this.find(this.dataSource.manager, accountId, webhookId));
  }

  // A new URL passes the SSRF guard again, now also refusing a host that does not resolve. Where api_key.* events go
  // (its URL, its events) only an `admin` key decides.
  async update(
    accountId: number,
    webhookId: number,
    input: WebhookUpdate,
    scopes: readonly string[],
  ): Promise<WebhookView> {
    const current = await this.find(this.dataSource.manager, accountId, webhookId);
    if (input.events) assertMayReceive(input.events, scopes);
    if (input.url !== undefined) assertMayReceive(current.events as DomainEventType[], scopes, 'url');
    const url = input.url === undefined ? null : (await this.checkedUrl(input.url, 'refuse')).href;
    const [updated] = await preparedQuery<Webhook>(
      this.dataSource,
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
    );
    if (!updated) throw ApiError.notFound('Webhook');
    return toWebhookView(updated);
  }

  // The replaced secret keeps signing deliveries (beside the new one) for `graceSeconds`; one replaced before is
  // dropped. A disabled webhook rotates too.
  async rotate(
    accountId: number,
    webhookId: number,
    graceSeconds: number,
    scopes: readonly string[],
  ): Promise<WebhookView & { secret: string }> {
    const current = await this.find(this.dataSource.manager, accountId, webhookId);
    // Whoever holds the secret can forge deliveries: of api_key.* events, only an admin key.
    assertMayReceive(current.events as DomainEventType[], scopes, 'secret');
    const secret = generateWebhookSecret();
    const [rotated] = await preparedQuery<Webhook>(
      this.dataSource,
      `UPDATE webhooks w SET secret = $3,
          previous_secret = CASE WHEN $4::integer > 0 THEN w.secret END,
          previous_secret_expires_at = CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END
        WHERE w.id = $1 AND w.account_id = $2
        RETURNING ${WEBHOOK_COLUMNS}`,
      [webhookId, accountId, this.secrets.seal(secret, accountId), graceSeconds],
    );
    if (!rotated) throw ApiError.notFound('Webhook');
    return { ...toWebhookView(rotated), secret };
  }

  // A new delivery (its own attempts and job ids) with the same webhook-id, so a receiver that deduplicates sees the
  // same message; sent even to a disabled webhook.
  async resend(accountId: number, webhookId: number, deliveryId: number): Promise<DeliveryView> {
    const delivery = await this.tx.run(async (tx) => {
      await this.find(tx.manager, accountId, webhookId);
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

  async list(accountId: number): Promise<WebhookView[]> {
    const rows = await preparedQuery<Webhook>(
      this.dataSource,
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks w WHERE w.account_id = $1 ORDER BY w.id`,
      [accountId],
    );
    return rows.map(toWebhookView);
  }

  /** Its deliveries go with it (ON DELETE CASCADE), so queued attempts find nothing to send. */
  async remove(accountId: number, webhookId: number): Promise<void> {
    await this.tx.run(async (tx) => {
      const [deleted] = await preparedQuery(
        tx.manager,
        `DELETE FROM webhooks WHERE id = $1 AND account_id = $2 RETURNING id`,
        [webhookId, accountId],
      );
      if (!deleted) throw ApiError.notFound('Webhook');
    });
  }

  // Deliveries that failed while it was disabled stay failed: the receiver was down for WEBHOOK_MAX_AGE_SECONDS, and
  // the events API has them all.
  async enable(accountId: number, webhookId: number): Promise<WebhookView> {
    const [enabled] = await preparedQuery<Webhook>(
      this.dataSource,
      `UPDATE webhooks w SET status = 'active', disabled_at = NULL WHERE w.id = $1 AND w.account_id = $2
       RETURNING ${WEBHOOK_COLUMNS}`,
      [webhookId, accountId],
    );
    if (!enabled) throw ApiError.notFound('Webhook');
    return toWebhookView(enabled);
  }

  /** limit + 1 rows: the extra one tells the controller another page exists. */
  async deliveries(accountId: number, webhookId: number, q: Page & { order?: FeedOrder }): Promise<DeliveryView[]> {
    await this.find(this.dataSource.manager, accountId, webhookId);
    const page = feedPage('d', 'webhook_id', webhookId, q.order ?? 'oldest', q.after);
    // A debugging view: a delivery attempted moments ago may show on the next call.
    const rows = await preparedQuery<WebhookDelivery>(
      this.replicas.forStaleRead(),
      sql`SELECT ${raw(DELIVERY_COLUMNS)} FROM webhook_deliveries d WHERE ${page.where} ${page.orderBy} LIMIT ${q.limit + 1}`,
    );
    return rows.map(toDeliveryView);
  }

  /** limit + 1 attempts after attempt number `after`, oldest first; 404 for a delivery not of this webhook and account. */
  async attempts(accountId: number, webhookId: number, deliveryId: number, q: Page): Promise<DeliveryAttemptView[]> {
    const manager = this.dataSource.manager;
    await this.find(manager, accountId, webhookId);
    const [delivery] = await preparedQuery(
      manager,
      `SELECT 1 FROM webhook_deliveries d WHERE d.id = $1 AND d.webhook_id = $2 AND d.account_id = $3`,
      [deliveryId, webhookId, accountId],
    );
    if (!delivery) throw ApiError.notFound('Delivery');
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
  async test(accountId: number, webhookId: number): Promise<DeliveryView> {
    const delivery = await this.tx.run(async (tx) => {
      await this.find(tx.manager, accountId, webhookId);
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

  private async checkedUrl(raw: string, unresolvable: 'refuse' | 'accept'): Promise<URL> {
    try {
      return (await resolveWebhookTarget(raw, this.config.webhooks.allowPrivateUrls, undefined, unresolvable)).url;
    } catch (err) {
      if (err instanceof UnsafeWebhookUrl) throw ApiError.validation('url', err.message);
      throw err;
    }
  }

  private async find(manager: EntityManager, accountId: number, webhookId: number): Promise<Webhook> {
    const [w] = await preparedQuery<Webhook>(
      manager,
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks w WHERE w.id = $1 AND w.account_id = $2`,
      [webhookId, accountId],
    );
    if (!w) throw ApiError.notFound('Webhook');
    return w;
  }
}

/** api_key.* events go only where an `admin` key says: subscribing, or changing `field` of such a webhook. */
function assertMayReceive(events: readonly DomainEventType[], scopes: readonly string[], field = 'events'): void {
  const adminOnly = events.filter(isAdminEventType);
  if (!adminOnly.length || scopes.includes('admin')) return;
  const message =
    field === 'events'
      ? `${adminOnly.join(', ')} need the admin scope, which this API key lacks`
      : `a webhook receiving ${adminOnly.join(', ')} changes its ${field} only with the admin scope, which this API key lacks`;
  throw new ApiError('insufficient_scope', `${field}: ${message}`, [{ field, message }]);
}
