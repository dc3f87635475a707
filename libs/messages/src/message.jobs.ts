import { defineJob, defineQueue } from '@app/jobs';

export const MessageQueue = defineQueue('messages');

/**
 * Processes one accepted message. A worker runs WORKER_BATCH_SIZE of them at once, and the
 * handler gathers those into one batch (JobBatcher).
 */
export const ProcessMessageJob = defineJob<{ accountId: number; messageId: string }>({
  name: 'message.process',
  queue: MessageQueue,
  jobId: ({ messageId }) => messageId,
  concurrency: (config) => config.jobs.batchSize,
});
