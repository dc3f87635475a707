import { stagedJob, sweepSource } from '@app/jobs';
import { messageBatch, ProcessMessagesJob } from './message.jobs';
import { DueMessage, messageQueries } from './messages.queries';

/** Messages still queued or processing one sweep interval after they were accepted. */
export const messagesSweep = sweepSource<DueMessage>({
  name: 'messages',
  due: messageQueries.sweepDue,
  // Rows of one batch, as their one job again.
  job: (rows) => stagedJob(ProcessMessagesJob, messageBatch(rows[0].jobId, rows), { traceparent: rows[0].traceparent }),
  batchOf: (row) => row.jobId,
});
