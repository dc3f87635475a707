import { StagedJob } from './job-definition';
import { OutboxEntity } from './outbox.entity';

export type OutboxRow = Pick<OutboxEntity, 'id' | 'queue' | 'jobName' | 'jobId' | 'payload' | 'runAt' | 'traceparent'>;

export const OUTBOX_COLUMNS =
  'id, queue, job_name AS "jobName", job_id AS "jobId", payload, run_at AS "runAt", traceparent';

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
