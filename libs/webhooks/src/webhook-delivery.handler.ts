import { Injectable } from '@nestjs/common';
import { JobPayload, JobRun, OnJob } from '@app/jobs';
import { DeliverWebhookBatchJob, DeliverWebhookJob } from './webhook.jobs';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { WebhookFairShare } from './webhook-fair-share';

@Injectable()
export class WebhookDeliveryHandler {
  constructor(
    private readonly deliveries: WebhookDeliveryService,
    private readonly fairShare: WebhookFairShare,
  ) {}

  @OnJob(DeliverWebhookJob)
  deliver(job: JobPayload<typeof DeliverWebhookJob>, run: JobRun): Promise<void> {
    return this.withinShare(job.accountId, run, () => this.deliveries.deliver(job));
  }

  /** One slot of the account's share for the whole batch: it takes one worker slot. */
  @OnJob(DeliverWebhookBatchJob)
  deliverBatch(job: JobPayload<typeof DeliverWebhookBatchJob>, run: JobRun): Promise<void> {
    return this.withinShare(job.accountId, run, () => this.deliveries.deliverBatch(job));
  }

  private async withinShare(accountId: number, run: JobRun, work: () => Promise<void>): Promise<void> {
    if (!(await this.fairShare.acquire(accountId, run.id))) {
      // Over the account's share: later, without spending an attempt.
      return run.postpone(new Date(this.fairShare.retryAt()));
    }
    try {
      await work();
    } finally {
      await this.fairShare.release(accountId, run.id);
    }
  }
}
