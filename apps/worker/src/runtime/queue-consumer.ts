import { Logger } from '@nestjs/common';
import { Job, Worker } from 'bullmq';
import { describe } from '@app/errors';
import { redactKeys } from '@app/observability';
import { countRedisError } from '@app/redis';
import { jobDuration, jobLag, jobsCompleted, jobsFailed } from '../ops/worker-metrics';

/** Seconds from processing start (set when the job became active) to its end (set when it finished, else now). */
const processingSeconds = (job: Job) =>
  job.processedOn ? Math.max(0, (job.finishedOn ?? Date.now()) - job.processedOn) / 1000 : undefined;

const jobLogger = new Logger('Jobs');

/** One consumed queue: its BullMQ worker, whose events count, time and log each job. */
export class QueueConsumer {
  private lastWorkerError?: string;
  private lastStart?: number;

  constructor(readonly worker: Worker) {}

  listen(): this {
    this.worker
      .on('error', (err) => this.onWorkerError(err))
      .on('active', (job) => this.onJobActive(job))
      .on('completed', (job) => this.onJobCompleted(job))
      .on('failed', (job, err) => this.onJobFailed(job, err));
    return this;
  }

  /** When this worker last started a job (Unix ms); undefined before its first. ConsumerWatch reads it. */
  lastJobStartedAt(): number | undefined {
    return this.lastStart;
  }

  /**
   * BullMQ's own errors (its connection to Redis lost, its run loop failing while closing, a
   * cluster failing over): counted by kind, and one warning per distinct message until a job
   * runs again, as libs/redis does. Without a listener
   * the Worker emits them as unhandled 'error' events.
   */
  onWorkerError(err: Error): void {
    countRedisError('petstore-queues', err);
    if (err.message !== this.lastWorkerError) jobLogger.warn({ err: describe(err) }, 'queue worker error');
    this.lastWorkerError = err.message;
  }

  onJobActive(job: Job): void {
    this.lastWorkerError = undefined;
    this.lastStart = Date.now();
    // Only the first run: a retry's start also counts its backoff and the failed runs before it.
    if (job.attemptsMade > 0 || !job.processedOn) return;
    const due = job.timestamp + (job.opts.delay ?? 0);
    jobLag.observe({ queue: job.queueName }, Math.max(0, job.processedOn - due) / 1000);
  }

  onJobCompleted(job: Job): void {
    jobsCompleted.inc({ queue: job.queueName });
    this.observeDuration(job);
  }

  onJobFailed(job: Job | undefined, err: Error): void {
    if (!job) return;
    // BullMQ sets finishedOn only when it gives up (no attempt left, or an unrecoverable error).
    const final = Boolean(job.finishedOn);
    jobsFailed.inc({ queue: job.queueName, final: String(final) });
    this.observeDuration(job);
    const line = { queue: job.queueName, job: job.name, jobId: job.id, reason: redactKeys(describe(err).message) };
    if (final) jobLogger.warn(line, 'job failed on its final attempt');
    else jobLogger.debug({ ...line, attemptsMade: job.attemptsMade }, 'job attempt failed, will retry');
  }

  private observeDuration(job: Job): void {
    const seconds = processingSeconds(job);
    if (seconds !== undefined) jobDuration.observe({ queue: job.queueName }, seconds);
  }
}
