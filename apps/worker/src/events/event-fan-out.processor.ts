import { WorkerHost } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import { JobName, JobPayloads } from '@app/queues';
import { EventFanOutService } from './event-fan-out.service';

@Injectable()
export class EventFanOutProcessor extends WorkerHost {
  constructor(private readonly fanOut: EventFanOutService) {
    super();
  }

  async process(job: Job<JobPayloads[JobName.FanOutEvent]>): Promise<void> {
    await this.fanOut.fanOut(job.data);
  }
}
