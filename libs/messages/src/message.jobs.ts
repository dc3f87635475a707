import { defineJob, defineQueue } from '@app/jobs';

export const MessageQueue = defineQueue('messages');

/** A worker runs WORKER_BATCH_SIZE at once, and the handler gathers those into one batch (JobBatcher). */
export const ProcessMessageJob = defineJob<{ accountId: number; messageId: string }>({
  name: 'message.process',
  queue: MessageQueue,
  jobId: ({ messageId }) => messageId,
  concurrency: (config) => config.jobs.batchSize,
});
