/** What a handler may know and do about the run of its job, without reaching into BullMQ. */
export interface JobRun {
  readonly id: string;
  readonly finalAttempt: boolean;
  readonly traceparent: string | null;
  /** Puts the job back without spending an attempt; the handler must return this promise (it never resolves). */
  postpone(until: Date): Promise<never>;
  /** A job of a deduplicated definition: from now on the same id enqueues a new job instead of being dropped. */
  releaseDeduplication(): Promise<void>;
}

export type JobHandler<P extends object = object> = (payload: P, run: JobRun) => Promise<unknown>;
