import { WorkerHost } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import { JobName, JobPayloads } from '@app/queues';
import { FulfilmentService } from './fulfilment.service';

/** Thin BullMQ adapter: a thrown error makes BullMQ retry with the job's exponential backoff. */
@Injectable()
export class FulfilmentProcessor extends WorkerHost {
  constructor(private readonly fulfilment: FulfilmentService) {
    super();
  }

  async process(job: Job<JobPayloads[JobName.FulfilOrder]>): Promise<{ fulfilled: boolean }> {
    return { fulfilled: await this.fulfilment.fulfil(job.data.accountId, job.data.orderId) };
  }
}
