import { stagedJob, sweepSource } from '@app/jobs';
import { ProcessMessageJob } from './message.jobs';
import { messageQueries } from './messages.queries';

/** Messages still queued or processing one sweep interval after they were accepted. */
export const MessagesSweepSource = sweepSource({
  name: 'messages',
  dueSql: messageQueries.sweepDue().text,
  job: (row) =>
    stagedJob(
      ProcessMessageJob,
      { accountId: row.accountId, messageId: String(row.id) },
      { traceparent: row.traceparent },
    ),
});
