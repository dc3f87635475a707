import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { DomainEvent, Webhook, WebhookDelivery } from '@app/database';
import { TransactionService, Tx } from '@app/outbox';
import { JobName, JobPayloads, jobIds } from '@app/queues';
import { PublicEvent, signatureHeader, toPublicEvent, toWebhookView } from '@app/webhooks';
import { retryDelayMs } from './retry-schedule';
import { SendResult, WebhookSender } from './webhook-sender';

type DeliveryJob = JobPayloads[JobName.DeliverWebhook];

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

  constructor(
    private readonly dataSource: DataSource,
    private readonly tx: TransactionService,
    private readonly sender: WebhookSender,
    private readonly config: AppConfig,
  ) {}

  async deliver(job: DeliveryJob): Promise<void> {
    const manager = this.dataSource.manager;
    const delivery = await manager.findOneBy(WebhookDelivery, { id: job.deliveryId, accountId: job.accountId });
    // Gone with its webhook, already settled, or a duplicate of an attempt already recorded.
    if (!delivery || delivery.status !== 'pending' || delivery.attempts !== job.attempt) return;
    const webhook = await manager
      .getRepository(Webhook)
      .createQueryBuilder('w')
      .addSelect('w.secret')
      .where('w.id = :id', { id: delivery.webhookId })
      .getOne();
    if (!webhook) return;
    const isTest = delivery.eventId === null;
    if (webhook.status === 'disabled' && !isTest) {
      await this.update(manager, delivery, { status: 'failed', lastError: 'webhook disabled', nextAttemptAt: null });
      return;
    }

    const event = isTest
      ? testEvent(delivery)
      : toPublicEvent(await manager.findOneByOrFail(DomainEvent, { id: delivery.eventId as number }));
    const body = JSON.stringify(event);
    const result = await this.sender.post(
      webhook.url,
      {
        'Content-Type': 'application/json',
        'User-Agent': 'Petstore-Webhooks/1',
        'Petstore-Signature': signatureHeader(webhook.secret, body),
        'Petstore-Event-Id': isTest ? `test-${delivery.id}` : String(event.id),
        'Petstore-Event-Type': event.type,
      },
      body,
    );
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
    await this.tx.run(async (tx) => {
      if (result.ok) {
        await this.update(tx.manager, d, { ...attempted, status: 'delivered', deliveredAt: now, nextAttemptAt: null });
        return;
      }
      const retryAt = new Date(now.getTime() + retryDelayMs(attempted.attempts, this.config.webhooks.backoffMs));
      const tooOld = retryAt.getTime() - new Date(d.createdAt).getTime() > this.config.webhooks.maxAgeSeconds * 1000;
      if (!isTest && !tooOld) {
        if (await this.update(tx.manager, d, { ...attempted, nextAttemptAt: retryAt })) {
          const next = { accountId: d.accountId, deliveryId: d.id, attempt: attempted.attempts };
          tx.enqueue(JobName.DeliverWebhook, next, jobIds.delivery(d.id, next.attempt), retryAt);
        }
        return;
      }
      const settled = await this.update(tx.manager, d, { ...attempted, status: 'failed', nextAttemptAt: null });
      if (settled && !isTest) await this.disable(tx, webhook);
    });
  }

  /** Applies the change only if nobody recorded this attempt first; true when it did. */
  private async update(manager: EntityManager, d: WebhookDelivery, values: Partial<WebhookDelivery>): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(WebhookDelivery)
      .set(values)
      .where('id = :id AND attempts = :attempts AND status = :pending', {
        id: d.id,
        attempts: d.attempts,
        pending: 'pending',
      })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  private async disable(tx: Tx, webhook: Webhook): Promise<void> {
    const result = await tx.manager
      .createQueryBuilder()
      .update(Webhook)
      .set({ status: 'disabled', disabledAt: () => 'now()' })
      .where('id = :id AND status = :active', { id: webhook.id, active: 'active' })
      .execute();
    if (!result.affected) return;
    const disabled = await tx.manager.findOneByOrFail(Webhook, { id: webhook.id });
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
