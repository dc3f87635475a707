import { WorkerHost } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import { JobName, JobPayloads } from '@app/queues';
import { MessageProcessingService } from './message-processing.service';

/** Runs message jobs (registered with processorProvider, which binds it to QueueName.Messages). */
@Injectable()
export class MessageProcessor extends WorkerHost {
  constructor(private readonly messages: MessageProcessingService) {
    super();
  }

  async process(job: Job<JobPayloads[JobName.ProcessMessage]>): Promise<void> {
    // attemptsMade counts finished failed attempts; this run is the last when it is attempts - 1.
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    await this.messages.process(job.data.messageId, finalAttempt);
  }
}
