import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DelayedError, Job, Queue, Worker } from 'bullmq';
import { AppConfig } from '@app/config';
import { JobCatalog, JobDefinition, JobHandler, JobHandlers, JobRun } from '@app/jobs';
import { StartUpError } from '@app/lifecycle';
import { currentTraceparent, runInTrace, tracingEnabled } from '@app/observability';
import { QueueConsumer } from './queue-consumer';

/**
 * The worker's one path from a queue to a handler. At init: every listed job (WORKER_FEATURES) must have its
 * @OnJob handler and every handler's job be listed (one line naming the job, and no worker starts); then one
 * BullMQ worker per queue of the listed jobs (those WORKER_QUEUES lists, when set), with the concurrency its
 * jobs ask for and JOB_LOCK_MS. At bootstrap the workers start taking jobs. Each job runs its handler
 * with a JobRun, in a consumer span continuing its record's trace when tracing is on.
 */
@Injectable()
export class QueueWorkers implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly built: QueueConsumer[] = [];

  constructor(
    private readonly config: AppConfig,
    private readonly catalog: JobCatalog,
    private readonly handlers: JobHandlers,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** This process's queue consumers; none before init. */
  get consumers(): readonly QueueConsumer[] {
    return this.built;
  }

  onModuleInit(): void {
    const listed = new Set(this.catalog.jobs.map((job) => job.name));
    const handled = new Set(this.handlers.jobs().map((job) => job.name));
    const unhandled = [...listed].find((name) => !handled.has(name));
    if (unhandled) throw new StartUpError(`job ${unhandled} is in WORKER_FEATURES but no @OnJob handler takes it`);
    const unlisted = [...handled].find((name) => !listed.has(name));
    if (unlisted) throw new StartUpError(`job ${unlisted} has an @OnJob handler but is not in WORKER_FEATURES`);
    const handlers = new Map([...listed].map((name) => [name, this.handlers.handler(name)!]));
    for (const queue of this.catalog.queues)
      if (!this.config.jobs.queues || this.config.jobs.queues.includes(queue))
        this.built.push(new QueueConsumer(this.workerFor(queue, handlers)).listen());
  }

  onApplicationBootstrap(): void {
    for (const { worker } of this.built) worker.run().catch((err: Error) => worker.emit('error', err));
  }

  /** WorkerShutdown has closed them within the grace; this returns those closes. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.built.map(({ worker }) => worker.close()));
  }

  // With the queue's own connection and prefix, as the producers' Queue has them.
  private workerFor(queue: string, handlers: Map<string, JobHandler>): Worker {
    const { opts } = this.moduleRef.get<Queue>(getQueueToken(queue), { strict: false });
    const run = (job: Job<object>, token?: string) => runJob(handlers, job, token);
    const traced = (job: Job<{ traceparent?: string }>, token?: string) =>
      runInTrace(
        job.data?.traceparent,
        `${queue} ${job.name}`,
        'consumer',
        { 'messaging.destination.name': queue, 'messaging.operation.name': job.name, 'messaging.message.id': job.id },
        () => run(job, token),
      );
    return new Worker(queue, tracingEnabled() ? traced : run, {
      connection: opts.connection,
      prefix: opts.prefix,
      telemetry: opts.telemetry,
      concurrency: concurrency(this.catalog.jobs, queue, this.config),
      // A killed worker's jobs are retried once its locks lapse, found by the stalled check.
      lockDuration: this.config.jobs.lockMs,
      stalledInterval: this.config.jobs.lockMs,
      autorun: false,
    });
  }
}

/** The job's @OnJob handler, given a JobRun instead of BullMQ's Job. */
async function runJob(handlers: Map<string, JobHandler>, job: Job<object>, token?: string): Promise<unknown> {
  const handle = handlers.get(job.name);
  // A job of a newer release (rolling deploy): fail this attempt, another worker may know it.
  if (!handle) throw new Error(`no handler for job ${job.name}`);
  const run: JobRun = {
    id: job.id as string,
    // attemptsMade counts finished failed attempts; this run is the last when it is attempts - 1.
    finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
    traceparent: currentTraceparent() ?? null,
    postpone: async (until) => {
      await job.moveToDelayed(until.getTime(), token);
      // Not a failure: BullMQ keeps the job delayed without spending an attempt.
      throw new DelayedError();
    },
    releaseDeduplication: async () => {
      // Only while the key still names this job (BullMQ checks): a newer job's key stays.
      await job.removeDeduplicationKey();
    },
  };
  // The trace a job carries is the run's business (the consumer span), not the payload's.
  const payload: Record<string, unknown> = { ...job.data };
  delete payload.traceparent;
  return handle(payload, run);
}

/** One line naming WORKER_QUEUES when it lists a queue no job uses (a typo would leave that group idle). */
export function assertKnownQueues(config: AppConfig, catalog: JobCatalog): void {
  const known = catalog.queues;
  const unknown = (config.jobs.queues ?? []).filter((queue) => !known.includes(queue));
  if (unknown.length)
    throw new StartUpError(`WORKER_QUEUES: unknown queue ${unknown.join(', ')} (known: ${known.join(', ')})`);
}

/** The largest concurrency the queue's job types ask for; WORKER_CONCURRENCY when none asks. */
function concurrency(jobs: readonly JobDefinition[], queue: string, config: AppConfig): number {
  const asked = jobs
    .filter((job) => job.queue.name === queue && job.concurrency)
    .map((job) => job.concurrency!(config));
  return asked.length ? Math.max(...asked) : config.jobs.concurrency;
}
