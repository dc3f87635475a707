import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { DomainEvent, preparedQuery, SealedWebhook, Webhook, WebhookDelivery } from '@app/database';
import { currentTraceparent, withSpan } from '@app/observability';
import { EVENT_COLUMNS, PublicEvent, toPublicEvent, TransactionService, Tx } from '@app/events';
import { JobPayload } from '@app/jobs';
import { retryDelayMs } from './retry-schedule';
import { resealWebhookSecrets, WebhookSecretBox } from './secret-box';
import { signatureHeader } from './signature';
import { DeliverWebhookJob } from './webhook.jobs';
import { webhookDeliveries, WebhookOutcome } from './webhook-metrics';
import { DELIVERY_COLUMNS, toWebhookView, WEBHOOK_COLUMNS } from './views';
import { SendResult, WebhookSender } from './webhook-sender';

type DeliveryJob = JobPayload<typeof DeliverWebhookJob>;

/** What a test delivery sends: shaped like an event, but not in the event log (id null). */
function testEvent(d: WebhookDelivery): Omit<PublicEvent, 'id'> & { id: null } {
  return {
    id: null,
    type: 'webhook.test',
    resourceType: 'webhook',
    resourceId: String(d.webhookId),
    sequence: 0,
    data: { webhookId: d.webhookId, deliveryId: d.id },
    createdAt: new Date(d.createdAt).toISOString(),
  };
}

/**
 * One attempt of one delivery, then its bookkeeping: delivered; or a retry scheduled with
 * backoff (a new job, staged through the outbox); or, once retrying would exceed
 * WEBHOOK_MAX_AGE_SECONDS, failed for good with the webhook disabled and webhook.disabled
 * emitted. Each job carries the attempt number it is for, so a duplicate job is a no-op.
 * Test deliveries get a single attempt and never disable the webhook.
 */
@Injectable()
export class WebhookDeliveryService {
  private readonly logger = new Logger(WebhookDeliveryService.name);
  private readonly secrets: WebhookSecretBox;

  constructor(
    private readonly dataSource: DataSource,
    private readonly tx: TransactionService,
    private readonly sender: WebhookSender,
    private readonly config: AppConfig,
  ) {
    this.secrets = new WebhookSecretBox(config.webhookSecretKeys);
  }

  async deliver(job: DeliveryJob): Promise<void> {
    const manager = this.dataSource.manager;
    const [delivery] = await preparedQuery<WebhookDelivery>(
      manager,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.id = $1 AND d.account_id = $2`,
      [job.deliveryId, job.accountId],
    );
    // Gone with its webhook, already settled, or a duplicate of an attempt already recorded.
    if (!delivery || delivery.status !== 'pending' || delivery.attempts !== job.attempt) return;
    const [webhook] = await preparedQuery<SealedWebhook>(
      manager,
      `SELECT ${WEBHOOK_COLUMNS}, w.secret FROM webhooks w WHERE w.id = $1`,
      [delivery.webhookId],
    );
    if (!webhook) return;
    // Stored before encryption, or under a key rotated out of first place: sealed anew on the way.
    if (this.secrets.needsReseal(webhook.secret)) await resealWebhookSecrets(manager, this.secrets, webhook.id);
    const isTest = delivery.eventId === null;
    if (webhook.status === 'disabled' && !isTest) {
      await this.update(manager, delivery, { status: 'failed', lastError: 'webhook disabled', nextAttemptAt: null });
      return;
    }

    const event = isTest
      ? testEvent(delivery)
      : toPublicEvent(
          (
            await preparedQuery<DomainEvent>(manager, `SELECT ${EVENT_COLUMNS} FROM events e WHERE e.id = $1`, [
              delivery.eventId,
            ])
          )[0],
        );
    const body = JSON.stringify(event);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': 'Petstore-Webhooks/1',
      'Petstore-Signature': signatureHeader(this.secrets.open(webhook.secret, webhook.accountId), body),
      'Petstore-Event-Id': isTest ? `test-${delivery.id}` : String(event.id),
      'Petstore-Event-Type': event.type,
    };
    const attributes = {
      'petstore.webhook.id': webhook.id,
      'petstore.delivery.id': delivery.id,
      'petstore.delivery.attempt': job.attempt + 1,
      'petstore.event.type': event.type,
    };
    // A client span per attempt; the receiver gets it as its parent (W3C traceparent header).
    const result = await withSpan('webhook delivery', 'client', attributes, async (span) => {
      const traceparent = currentTraceparent();
      const sent = await this.sender.post(webhook.url, traceparent ? { ...headers, traceparent } : headers, body);
      if (sent.statusCode !== null) span.set({ 'http.response.status_code': sent.statusCode });
      if (!sent.ok) span.fail(sent.error ?? 'failed');
      return sent;
    });
    this.logger.log(
      {
        deliveryId: delivery.id,
        webhookId: webhook.id,
        attempt: job.attempt + 1,
        ok: result.ok,
        status: result.statusCode,
      },
      result.ok ? 'webhook delivered' : `webhook attempt failed: ${result.error}`,
    );
    await this.record(delivery, webhook, result, isTest);
  }

  private async record(d: WebhookDelivery, webhook: Webhook, result: SendResult, isTest: boolean): Promise<void> {
    const now = new Date();
    const attempted = {
      attempts: d.attempts + 1,
      lastStatusCode: result.statusCode,
      lastError: result.error,
      lastAttemptAt: now,
    };
    // Counted once this attempt's outcome is committed; a refused target counts as refused whether or not it is retried.
    const outcome = await this.tx.run(async (tx): Promise<WebhookOutcome | undefined> => {
      if (result.ok) {
        const recorded = await this.update(tx.manager, d, {
          ...attempted,
          status: 'delivered',
          deliveredAt: now,
          nextAttemptAt: null,
        });
        return recorded ? 'delivered' : undefined;
      }
      const retryAt = new Date(now.getTime() + retryDelayMs(attempted.attempts, this.config.webhooks.backoffMs));
      const tooOld = retryAt.getTime() - new Date(d.createdAt).getTime() > this.config.webhooks.maxAgeSeconds * 1000;
      if (!isTest && !tooOld) {
        if (!(await this.update(tx.manager, d, { ...attempted, nextAttemptAt: retryAt }))) return undefined;
        const next = { accountId: d.accountId, deliveryId: d.id, attempt: attempted.attempts };
        tx.enqueue(DeliverWebhookJob, next, { runAt: retryAt });
        return result.refused ? 'refused' : 'retry';
      }
      const settled = await this.update(tx.manager, d, { ...attempted, status: 'failed', nextAttemptAt: null });
      if (!settled) return undefined;
      if (!isTest) await this.disable(tx, webhook);
      return result.refused ? 'refused' : 'failed';
    });
    if (outcome) webhookDeliveries().inc({ outcome });
  }

  /** Applies the change only if nobody recorded this attempt first; true when it did. */
  private async update(manager: EntityManager, d: WebhookDelivery, values: Partial<WebhookDelivery>): Promise<boolean> {
    const next = { ...d, ...values };
    const updated = await preparedQuery(
      manager,
      `UPDATE webhook_deliveries
          SET status = $3, attempts = $4, last_status_code = $5, last_error = $6, last_attempt_at = $7,
              next_attempt_at = $8, delivered_at = $9
        WHERE id = $1 AND attempts = $2 AND status = 'pending'
        RETURNING id`,
      [
        d.id,
        d.attempts,
        next.status,
        next.attempts,
        next.lastStatusCode,
        next.lastError,
        next.lastAttemptAt,
        next.nextAttemptAt,
        next.deliveredAt,
      ],
    );
    return updated.length > 0;
  }

  private async disable(tx: Tx, webhook: Webhook): Promise<void> {
    const [disabled] = await preparedQuery<Webhook>(
      tx.manager,
      `UPDATE webhooks w SET status = 'disabled', disabled_at = now() WHERE w.id = $1 AND w.status = 'active'
       RETURNING ${WEBHOOK_COLUMNS}`,
      [webhook.id],
    );
    if (!disabled) return;
    this.logger.warn({ webhookId: webhook.id }, 'webhook disabled after failing for the maximum age');
    await tx.emit({
      accountId: webhook.accountId,
      type: 'webhook.disabled',
      resourceType: 'webhook',
      resourceId: webhook.id,
      data: toWebhookView(disabled),
    });
  }
}
