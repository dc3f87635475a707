import { defineJob, defineQueue } from '@app/jobs';

export const MessageQueue = defineQueue('messages');

/** Two batches in flight: one in Postgres while the other completes its jobs in Redis and gathers the next. */
export const ProcessMessageJob = defineJob<{ accountId: number; messageId: string }>({
  name: 'message.process',
  queue: MessageQueue,
  jobId: ({ messageId }) => messageId,
  concurrency: (config) => 2 * config.jobs.batchSize,
  // At drain rates the 1,000 kept lasted under a second; a processed message's claim finds nothing to do.
  dropCompleted: true,
});
