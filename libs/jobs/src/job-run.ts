/** What a handler may know and do about the run of its job, without reaching into BullMQ. */
export interface JobRun {
  readonly id: string;
  /** This run is the job's last attempt: a failure now is final. */
  readonly finalAttempt: boolean;
  /** The W3C traceparent of the run's span (null when tracing is off). */
  readonly traceparent: string | null;
  /**
   * Puts the job back until `until` without spending an attempt, and ends this run: the handler
   * must return the promise this gives (it never resolves normally).
   */
  postpone(until: Date): Promise<never>;
}

export type JobHandler<P extends object = object> = (payload: P, run: JobRun) => Promise<unknown>;
