import { WorkerHost } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import { JobName, JobPayloads } from '@app/queues';
import { WebhookDeliveryService } from './webhook-delivery.service';

/** One delivery attempt per job; retries are new jobs scheduled by the service, not BullMQ's. */
@Injectable()
export class WebhookDeliveryProcessor extends WorkerHost {
  constructor(private readonly deliveries: WebhookDeliveryService) {
    super();
  }

  async process(job: Job<JobPayloads[JobName.DeliverWebhook]>): Promise<void> {
    await this.deliveries.deliver(job.data);
  }
}
