import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { GroupCommit, preparedQuery } from '@app/database';
import { currentTraceparent, runInTrace, withSpan } from '@app/observability';
import { PublicEvent, toPublicEvent } from '@app/events';
import { UnitOfWork, Tx } from '@app/transactions';
import { JobPayload } from '@app/jobs';
import { retryDelayMs } from './retry-schedule';
import { resealWebhookSecrets, WebhookSecretBox } from './secret-box';
import { WebhookSigner } from './signature';
import { DeliverWebhookBatchJob, DeliverWebhookJob, WebhookQueue } from './webhook.jobs';
import { webhookDeliveries, WebhookOutcome } from './webhook-metrics';
import { toWebhookView } from './views';
import {
  BatchRowToSend,
  DeliveredAttempt,
  DeliveryToSend,
  isAdminOnlyWebhook,
  Webhook,
  WebhookDelivery,
  webhookDeliveryQueries,
  webhookQueries,
} from './webhooks.queries';
import { SendResult, WebhookDestination, WebhookSender } from './webhook-sender';

type DeliveryJob = JobPayload<typeof DeliverWebhookJob>;
type BatchJob = JobPayload<typeof DeliverWebhookBatchJob>;

type WebhookRef = Pick<Webhook, 'id' | 'accountId'>;

/** The consumer span a delivery's own job would have had: a batch's deliveries each continue their event's trace. */
const DELIVERY_SPAN = `${WebhookQueue.name} ${DeliverWebhookJob.name}`;

/** Whether the receiver took it, and its bookkeeping (which the next delivery need not wait for). */
interface Sent {
  ok: boolean;
  recorded: Promise<unknown>;
}
type Attempt = () => Promise<Sent>;

/** Shaped like an event, but not in the event log (id null). */
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

// Each job carries the attempt number it is for, so a duplicate job is a no-op. Test deliveries get a single attempt
// and never disable the webhook.
@Injectable()
export class WebhookDeliveryService {
  private readonly logger = new Logger(WebhookDeliveryService.name);
  private readonly secrets: WebhookSecretBox;
  /** Most deliveries succeed: their bookkeeping is one statement for all that finish together. */
  private readonly delivered = new GroupCommit<DeliveredAttempt, boolean>((batch) => this.markDelivered(batch), {
    maxInFlight: 1,
    maxBatch: 500,
    isItemError: () => false,
  });

  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
    private readonly sender: WebhookSender,
    private readonly config: AppConfig,
  ) {
    this.secrets = new WebhookSecretBox(config.webhookSecretKeys);
  }

  async deliver(job: DeliveryJob): Promise<void> {
    const [delivery] = await preparedQuery<DeliveryToSend>(
      this.dataSource.manager,
      webhookDeliveryQueries.toSend(job.accountId, job.deliveryId),
    );
    // Gone with its webhook, already settled, or a duplicate of an attempt already recorded.
    if (!delivery || delivery.status !== 'pending' || delivery.attempts !== job.attempt) return;
    await this.send([delivery], (_d, attempt) => attempt());
  }

  /** Those not attempted yet (a rerun of the job skips the ones it recorded); each in its own delivery's trace. */
  async deliverBatch(job: BatchJob): Promise<void> {
    const rows = await preparedQuery<BatchRowToSend>(
      this.dataSource.manager,
      webhookDeliveryQueries.batchToSend(job.accountId, job.webhookId, job.createdAtUs),
    );
    if (!rows.length) return;
    const webhook = rows[0].webhook!;
    for (const row of rows) row.webhook = webhook;
    const deliveries = rows as DeliveryToSend[];
    // As a job of its own would run it: under a consumer span continuing the delivery's trace.
    await this.send(deliveries, (d, attempt) =>
      runInTrace(
        d.traceparent,
        DELIVERY_SPAN,
        'consumer',
        { 'messaging.destination.name': WebhookQueue.name },
        attempt,
      ),
    );
  }

  // In order while the receiver answers 2xx, each recorded without holding up the next; after a failed attempt the
  // rest go out at once, as separate jobs would (a receiver timing out must not take a timeout per delivery in turn).
  private async send(deliveries: DeliveryToSend[], inTrace: (d: DeliveryToSend, attempt: Attempt) => Promise<Sent>) {
    const { webhook } = deliveries[0];
    // Stored before encryption, or under a key rotated out of first place: sealed anew on the way.
    if (this.secrets.needsReseal(webhook.secret))
      await resealWebhookSecrets(this.dataSource.manager, this.secrets, webhook.id);
    const now = new Date();
    // During a rotation's grace, signed under the replaced secret too.
    const signer = new WebhookSigner(
      [webhook.secret, webhook.previousSecret]
        .filter(
          (sealed, i): sealed is string => !!sealed && (i === 0 || new Date(webhook.previousSecretExpiresAt!) > now),
        )
        .map((sealed) => this.secrets.open(sealed, webhook.accountId)),
    );
    // Checked once for the batch (DNS included), when its first delivery goes out: a disabled webhook sends none.
    let destination: Promise<WebhookDestination> | undefined;
    const to = () => (destination ??= this.sender.destination(webhook.url));
    const recording: Promise<unknown>[] = [];
    const attempt = async (d: DeliveryToSend) => {
      const { ok, recorded } = await inTrace(d, () => this.attempt(d, signer, to));
      // Settles with the error, if any: one not awaited yet must not be an unhandled rejection.
      recording.push(
        recorded.then(
          () => undefined,
          (err: unknown) => err ?? new Error('not recorded'),
        ),
      );
      return ok;
    };
    let next = 0;
    while (next < deliveries.length && (await attempt(deliveries[next++])));
    await Promise.all(deliveries.slice(next).map(attempt));
    for (const err of await Promise.all(recording)) if (err) throw err;
  }

  private async attempt(
    delivery: DeliveryToSend,
    signer: WebhookSigner,
    to: () => Promise<WebhookDestination>,
  ): Promise<Sent> {
    const { webhook } = delivery;
    const isTest = delivery.eventId === null;
    // Tests and resends are asked for: they go to a disabled webhook too. An admin-only event's data goes to no
    // webhook that stopped being admin-only (its api_key.* events dropped): a key without admin may redirect it now.
    const refused =
      webhook.status === 'disabled' && !isTest && delivery.resendOf === null
        ? 'webhook disabled'
        : delivery.event?.adminOnly && !isAdminOnlyWebhook(webhook)
          ? 'event only for admin-only webhooks'
          : null;
    if (refused) {
      const recorded = this.update(this.dataSource.manager, delivery, {
        status: 'failed',
        lastError: refused,
        nextAttemptAt: null,
      });
      return { ok: true, recorded };
    }

    const event = isTest || !delivery.event ? testEvent(delivery) : toPublicEvent(delivery.event);
    const body = JSON.stringify(event);
    const now = new Date();
    // The event's id, the same on every attempt and resend: receivers deduplicate on it.
    const messageId = isTest ? `test-${delivery.resendOf ?? delivery.id}` : String(event.id);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': 'Petstore-Webhooks/1',
      ...signer.standardHeaders(messageId, body, now),
      'Petstore-Event-Id': messageId,
      'Petstore-Event-Type': event.type,
    };
    if (now < this.config.webhooks.legacySignatureUntil) headers['Petstore-Signature'] = signer.legacyHeader(body, now);
    const attributes = {
      'petstore.webhook.id': webhook.id,
      'petstore.delivery.id': delivery.id,
      'petstore.delivery.attempt': delivery.attempts + 1,
      'petstore.event.type': event.type,
    };
    // A client span per attempt; the receiver gets it as its parent (W3C traceparent header).
    const result = await withSpan('webhook delivery', 'client', attributes, async (span) => {
      const traceparent = currentTraceparent();
      const sent = await this.sender.post(await to(), traceparent ? { ...headers, traceparent } : headers, body);
      if (sent.statusCode !== null) span.set({ 'http.response.status_code': sent.statusCode });
      if (!sent.ok) span.fail(sent.error ?? 'failed');
      return sent;
    });
    // A failed attempt is news; a delivered one is counted (petstore_webhook_deliveries_total) and logged at debug.
    const line = {
      deliveryId: delivery.id,
      webhookId: webhook.id,
      attempt: delivery.attempts + 1,
      status: result.statusCode,
    };
    if (result.ok) this.logger.debug(line, 'webhook delivered');
    else this.logger.log(line, `webhook attempt failed: ${result.error}`);
    return { ok: result.ok, recorded: this.record(delivery, webhook, result, isTest) };
  }

  private async record(d: DeliveryToSend, webhook: WebhookRef, result: SendResult, isTest: boolean): Promise<void> {
    const now = new Date();
    const attempted = {
      attempts: d.attempts + 1,
      lastStatusCode: result.statusCode,
      lastError: result.error,
      lastAttemptAt: now,
      lastDurationMs: result.durationMs,
      lastResponseExcerpt: result.excerpt,
    };
    if (result.ok) {
      const attempt = {
        accountId: d.accountId,
        id: d.id,
        attempts: d.attempts,
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        excerpt: result.excerpt,
        at: now,
      };
      if (await this.delivered.submit(attempt)) webhookDeliveries().inc({ outcome: 'delivered' });
      return;
    }
    // A resend keeps its event's horizon and place in the schedule: past it, one attempt; before it, the retries the
    // event has left (issue 60: a fresh 3-day schedule per resend let recover multiply the POSTs). One whose event is
    // gone (retention) is long past it.
    const resend = d.resendOf !== null;
    const from = resend ? (d.event ? new Date(d.event.createdAt).getTime() : 0) : new Date(d.createdAt).getTime();
    const failures = (d.chainAttempts ?? 0) + attempted.attempts;
    // Counted once this attempt's outcome is committed; a refused target counts as refused whether or not it is retried.
    const outcome = await this.uow.run(async (tx): Promise<WebhookOutcome | undefined> => {
      const retryAt = new Date(now.getTime() + retryDelayMs(failures, this.config.webhooks.backoffMs));
      const tooOld = retryAt.getTime() - from > this.config.webhooks.maxAgeSeconds * 1000;
      if (!isTest && !tooOld) {
        if (!(await this.update(tx.manager, d, { ...attempted, nextAttemptAt: retryAt }))) return undefined;
        const next = { accountId: d.accountId, deliveryId: d.id, attempt: attempted.attempts };
        tx.enqueue(DeliverWebhookJob, next, { runAt: retryAt });
        return result.refused ? 'refused' : 'retry';
      }
      const settled = await this.update(tx.manager, d, { ...attempted, status: 'failed', nextAttemptAt: null });
      if (!settled) return undefined;
      // The first delivery's failure measured the outage; a resend's (one attempt past the horizon) does not.
      if (!isTest && !resend) await this.disable(tx, webhook);
      return result.refused ? 'refused' : 'failed';
    });
    if (outcome) webhookDeliveries().inc({ outcome });
  }

  /** One statement, nothing else to commit with it: no transaction of its own. */
  private async markDelivered(batch: DeliveredAttempt[]): Promise<boolean[]> {
    const recorded = await preparedQuery<{ id: number }>(this.dataSource, webhookDeliveryQueries.markDelivered(batch));
    const ids = new Set(recorded.map((r) => r.id));
    return batch.map((a) => ids.delete(a.id));
  }

  /** Applies the change only if nobody recorded this attempt first; true when it did. */
  private async update(manager: EntityManager, d: WebhookDelivery, values: Partial<WebhookDelivery>): Promise<boolean> {
    const updated = await preparedQuery(manager, webhookDeliveryQueries.recordAttempt(d, { ...d, ...values }));
    return updated.length > 0;
  }

  private async disable(tx: Tx, webhook: WebhookRef): Promise<void> {
    const [disabled] = await preparedQuery<Webhook>(tx.manager, webhookQueries.disable(webhook.id));
    if (!disabled) return;
    this.logger.warn({ webhookId: webhook.id }, 'webhook disabled after failing for the maximum age');
    await tx.emit({
      accountId: webhook.accountId,
      type: 'webhook.disabled',
      resourceType: 'webhook',
      resourceId: webhook.id,
      data: toWebhookView(disabled),
      // Its url and events are the admin keys' alone.
      adminOnly: isAdminOnlyWebhook(disabled),
    });
  }
}
