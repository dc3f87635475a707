import { StagedJob } from './job-definition';

export interface OutboxRow {
  id: number;
  queue: string;
  job_name: string;
  job_id: string;
  payload: unknown;
  run_at: Date | null;
  traceparent: string | null;
}

export const OUTBOX_COLUMNS = 'id, queue, job_name, job_id, payload, run_at, traceparent';

/** The row shape of a job enqueued without an outbox row (id 0: nothing to delete). */
export function unstagedRow(job: StagedJob): OutboxRow {
  return {
    id: 0,
    queue: job.queue,
    job_name: job.name,
    job_id: job.jobId,
    payload: job.payload,
    run_at: job.runAt ?? null,
    traceparent: job.traceparent ?? null,
  };
}
