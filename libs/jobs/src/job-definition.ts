import { AppConfig } from '@app/config';
import { QueueDefinition } from './queue-definition';

// The same work always gets the same jobId, so a retried enqueue (relay, sweep) is a no-op while BullMQ
// still knows the first job; BullMQ forbids ':' in ids.
export interface JobDefinition<P extends object = object> {
  readonly name: string;
  readonly queue: QueueDefinition;
  jobId(payload: P): string;
  /** Jobs of this queue one worker runs at once (the largest of its job types'); WORKER_CONCURRENCY when absent. */
  readonly concurrency?: (config: AppConfig) => number;
  /**
   * Set for work one job can do for many: a job enqueued while another of the same id has not released it (JobRun
   * releaseDeduplication) is dropped, so the handler must release before it reads what it is to do.
   */
  deduplicationId?(payload: P): string;
  /**
   * Set when a completed job is worth nothing kept: its id enqueued again runs again, and the handler finds its
   * work done. BullMQ then deletes it on completion instead of trimming the kept ones, per job, in Redis.
   */
  readonly dropCompleted?: boolean;
  /** Type carrier only (JobPayload<typeof Job>); never set. */
  readonly payload?: P;
}

/** The definition as given, typed by its payload (JobPayload); apps list it (WorkerFeature), nothing records it. */
export function defineJob<P extends object>(definition: Omit<JobDefinition<P>, 'payload'>): JobDefinition<P> {
  return definition;
}

export type JobPayload<D> = D extends JobDefinition<infer P> ? P : never;

export interface StagedJob {
  name: string;
  queue: string;
  payload: object;
  jobId: string;
  runAt?: Date | null;
  traceparent?: string | null;
}

export interface StageOptions {
  runAt?: Date | null;
  traceparent?: string | null;
}

export function stagedJob<P extends object>(
  definition: JobDefinition<P>,
  payload: P,
  options: StageOptions = {},
): StagedJob {
  return {
    name: definition.name,
    queue: definition.queue.name,
    payload,
    jobId: definition.jobId(payload),
    runAt: options.runAt,
    traceparent: options.traceparent,
  };
}
