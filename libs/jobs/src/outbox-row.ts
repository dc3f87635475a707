import { StagedJob } from './job-definition';
import { OutboxRow } from './jobs.queries';

/** A staged job as its outbox row; id 0 for a job enqueued without one (nothing to delete). */
export function outboxRow(job: StagedJob, id = 0): OutboxRow {
  return {
    id,
    queue: job.queue,
    jobName: job.name,
    jobId: job.jobId,
    payload: job.payload,
    runAt: job.runAt ?? null,
    traceparent: job.traceparent ?? null,
  };
}
