import { AppConfig } from '@app/config';
import { QueueDefinition } from './queue-definition';

/**
 * A job type, declared once by the feature that owns it: its name, its queue, its payload type and
 * its deterministic id (the same piece of work always gets the same id, so a retried enqueue by the
 * relay or the sweep is a no-op while BullMQ still knows the first job; BullMQ forbids ':' in ids).
 * Its handler is the feature's method marked @OnJob(definition).
 */
export interface JobDefinition<P extends object = object> {
  readonly name: string;
  readonly queue: QueueDefinition;
  jobId(payload: P): string;
  /**
   * Jobs of this queue one worker runs at once (the largest of its job types'); WORKER_CONCURRENCY
   * when absent.
   */
  readonly concurrency?: (config: AppConfig) => number;
  /** Type carrier only: lets JobPayload<typeof Job> name the payload. Never set. */
  readonly payload?: P;
}

export function defineJob<P extends object>(definition: Omit<JobDefinition<P>, 'payload'>): JobDefinition<P> {
  return definition;
}

export type JobPayload<D> = D extends JobDefinition<infer P> ? P : never;

/** A job to be written to the outbox: what the relay and dispatch need to enqueue it. */
export interface StagedJob {
  name: string;
  /** The queue's name. */
  queue: string;
  payload: object;
  jobId: string;
  /** Delay the job until this instant (a future ship date). */
  runAt?: Date | null;
  /** The W3C traceparent the job continues (null or absent: tracing off, or no trace). */
  traceparent?: string | null;
}

export interface StageOptions {
  runAt?: Date | null;
  traceparent?: string | null;
}

/** The outbox record of one job of `definition`. */
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
