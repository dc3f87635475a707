import { Injectable } from '@nestjs/common';
import { JobPayload, JobRun, OnJob } from '@app/jobs';
import { DeliverWebhookJob } from './webhook.jobs';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { WebhookFairShare } from './webhook-fair-share';

@Injectable()
export class WebhookDeliveryHandler {
  constructor(
    private readonly deliveries: WebhookDeliveryService,
    private readonly fairShare: WebhookFairShare,
  ) {}

  @OnJob(DeliverWebhookJob)
  async deliver(job: JobPayload<typeof DeliverWebhookJob>, run: JobRun): Promise<void> {
    if (!(await this.fairShare.acquire(job.accountId, run.id))) {
      // Over the account's share: later, without spending an attempt.
      return run.postpone(new Date(this.fairShare.retryAt()));
    }
    try {
      await this.deliveries.deliver(job);
    } finally {
      await this.fairShare.release(job.accountId, run.id);
    }
  }
}
