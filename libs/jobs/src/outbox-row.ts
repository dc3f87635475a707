import { StagedJob } from './job-definition';
import { OutboxRow } from './jobs.queries';

/** The row shape of a job enqueued without an outbox row (id 0: nothing to delete). */
export function unstagedRow(job: StagedJob): OutboxRow {
  return {
    id: 0,
    queue: job.queue,
    jobName: job.name,
    jobId: job.jobId,
    payload: job.payload,
    runAt: job.runAt ?? null,
    traceparent: job.traceparent ?? null,
  };
}
