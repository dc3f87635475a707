import { defineJob, defineQueue } from '@app/jobs';

export const MessageQueue = defineQueue('messages');

/** A message a job is to process; its trace is the request's that accepted it. */
export interface MessageRef {
  accountId: number;
  id: string;
  traceparent?: string;
}

export interface MessageBatch {
  batch: string;
  messages: MessageRef[];
}

/** The payload for the rows of one batch (a group commit's, or a sweep page's of one job), named `batch`. */
export function messageBatch(
  batch: string,
  rows: readonly { accountId: number; id: number | string; traceparent: string | null }[],
): MessageBatch {
  const messages = rows.map(({ accountId, id, traceparent }): MessageRef =>
    traceparent ? { accountId, id: String(id), traceparent } : { accountId, id: String(id) },
  );
  return { batch, messages };
}

/**
 * The messages of one group commit: queue costs (add, fetch, lock, completion) are paid per job, not per message.
 * `batch` is the first message's id, which the others keep as their job_id (the lost-job sweep finds it from any).
 * Two batches of messages in flight: one in Postgres while the other completes its jobs in Redis.
 */
export const ProcessMessagesJob = defineJob<MessageBatch>({
  name: 'message.process-batch',
  queue: MessageQueue,
  jobId: ({ batch }) => batch,
  concurrency: (config) => 2 * config.jobs.batchSize,
  // A processed message's claim finds nothing to do, so a completed job is worth nothing kept.
  dropCompleted: true,
});

/** One message, as releases before batches enqueued it: jobs of that kind may still wait in Redis or the outbox. */
export const ProcessMessageJob = defineJob<{ accountId: number; messageId: string }>({
  name: 'message.process',
  queue: MessageQueue,
  jobId: ({ messageId }) => messageId,
  dropCompleted: true,
});
