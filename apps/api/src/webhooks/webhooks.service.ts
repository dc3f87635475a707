import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { Webhook, WebhookDelivery } from '@app/database';
import { ApiError } from '@app/errors';
import { TransactionService } from '@app/outbox';
import { JobName, jobIds } from '@app/queues';
import {
  generateWebhookSecret,
  resolveWebhookTarget,
  toWebhookView,
  UnsafeWebhookUrl,
  WebhookView,
} from '@app/webhooks';
import { PageQuery } from '../common/pagination';
import { NewWebhookDto } from './webhooks.dto';

export interface DeliveryView {
  id: number;
  webhookId: number;
  eventId: number | null;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
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
    lastAttemptAt: iso(d.lastAttemptAt),
    nextAttemptAt: iso(d.nextAttemptAt),
    deliveredAt: iso(d.deliveredAt),
    createdAt: iso(d.createdAt) as string,
  };
}

/** The account's webhooks and what was delivered to them; the worker does the delivering. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly tx: TransactionService,
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async create(accountId: number, input: NewWebhookDto): Promise<WebhookView & { secret: string }> {
    let url: URL;
    try {
      ({ url } = await resolveWebhookTarget(input.url, this.config.webhooks.allowPrivateUrls, undefined, 'accept'));
    } catch (err) {
      if (err instanceof UnsafeWebhookUrl) throw ApiError.validation('url', err.message);
      throw err;
    }
    const secret = generateWebhookSecret();
    const webhook = await this.tx.run(async (tx) => {
      const repo = tx.manager.getRepository(Webhook);
      return repo.save(repo.create({ accountId, url: url.href, events: input.events, secret, status: 'active' }));
    });
    return { ...toWebhookView(webhook), secret };
  }

  async list(accountId: number): Promise<WebhookView[]> {
    const rows = await this.dataSource.getRepository(Webhook).find({ where: { accountId }, order: { id: 'ASC' } });
    return rows.map(toWebhookView);
  }

  /** Its deliveries go with it (ON DELETE CASCADE), so queued attempts find nothing to send. */
  async remove(accountId: number, webhookId: number): Promise<void> {
    await this.tx.run(async (tx) => {
      const result = await tx.manager.getRepository(Webhook).delete({ id: webhookId, accountId });
      if (!result.affected) throw ApiError.notFound('Webhook');
    });
  }

  /**
   * Active again (a no-op on an active one). Deliveries that failed while it was disabled stay
   * failed: the receiver was down for WEBHOOK_MAX_AGE_SECONDS, and the events API has them all.
   */
  async enable(accountId: number, webhookId: number): Promise<WebhookView> {
    return this.tx.run(async (tx) => {
      const repo = tx.manager.getRepository(Webhook);
      const result = await repo.update({ id: webhookId, accountId }, { status: 'active', disabledAt: null });
      if (!result.affected) throw ApiError.notFound('Webhook');
      return toWebhookView(await repo.findOneByOrFail({ id: webhookId }));
    });
  }

  /** limit + 1 rows: the extra one tells the controller another page exists. */
  async deliveries(accountId: number, webhookId: number, q: PageQuery): Promise<DeliveryView[]> {
    await this.find(this.dataSource.manager, accountId, webhookId);
    const rows = await this.dataSource
      .getRepository(WebhookDelivery)
      .createQueryBuilder('d')
      .where('d.webhookId = :webhookId AND d.id > :after', { webhookId, after: q.after ?? 0 })
      .orderBy('d.id')
      .limit(q.limit + 1)
      .getMany();
    return rows.map(toDeliveryView);
  }

  /** Queues one `webhook.test` delivery (a single attempt, no retries) and answers at once. */
  async test(accountId: number, webhookId: number): Promise<DeliveryView> {
    const delivery = await this.tx.run(async (tx) => {
      await this.find(tx.manager, accountId, webhookId);
      const repo = tx.manager.getRepository(WebhookDelivery);
      const d = await repo.save(repo.create({ webhookId, accountId, eventId: null, eventType: 'webhook.test' }));
      tx.enqueue(JobName.DeliverWebhook, { accountId, deliveryId: d.id, attempt: 0 }, jobIds.delivery(d.id, 0));
      return repo.findOneByOrFail({ id: d.id });
    });
    return toDeliveryView(delivery);
  }

  private async find(manager: EntityManager, accountId: number, webhookId: number): Promise<Webhook> {
    const w = await manager.getRepository(Webhook).findOneBy({ id: webhookId, accountId });
    if (!w) throw ApiError.notFound('Webhook');
    return w;
  }
}
