import { DueRow, stagedJob, sweepSource } from '@app/jobs';
import { messageBatch, ProcessMessagesJob } from './message.jobs';
import { messageQueries } from './messages.queries';

/** `jobId`: the job that holds the message, its batch's. */
type DueMessage = DueRow & { jobId: string };

/** Messages still queued or processing one sweep interval after they were accepted. */
export const MessagesSweepSource = sweepSource<DueMessage>({
  name: 'messages',
  dueSql: messageQueries.sweepDue().text,
  // Rows of one batch, as their one job again.
  job: (rows) => stagedJob(ProcessMessagesJob, messageBatch(rows[0].jobId, rows), { traceparent: rows[0].traceparent }),
  batchOf: (row) => row.jobId,
});
