import { Processor } from '@nestjs/bullmq';
import { Injectable, Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DelayedError, Job } from 'bullmq';
import { AppConfig } from '@app/config';
import { JobDefinition, JobHandlers, JobRun } from '@app/jobs';
import { currentTraceparent, runInTrace, StartUpError, tracingEnabled } from '@app/observability';
import { MeteredWorkerHost } from './metered-worker-host';
import { WorkerJobs } from './worker-jobs';
import { WorkerStart } from './worker-start';

/**
 * The one BullMQ processor class: runs each job of its queue through the @OnJob handler of the
 * job's name (JobHandlers), giving the handler a JobRun instead of BullMQ's Job.
 */
@Injectable()
export class QueueWorkerHost extends MeteredWorkerHost {
  constructor(private readonly handlers: JobHandlers) {
    super();
  }

  async process(job: Job<object>, token?: string): Promise<unknown> {
    const handle = this.handlers.handler(job.name);
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
    };
    // The trace a job carries is the run's business (see queueWorkers), not the payload's.
    const payload: Record<string, unknown> = { ...job.data };
    delete payload.traceparent;
    return handle(payload, run);
  }
}

/** One line naming WORKER_QUEUES when it lists a queue no job uses (a typo would leave that group idle). */
export function assertKnownQueues(config: AppConfig, jobs: JobDefinition[]): void {
  const known = new WorkerJobs(jobs).queues;
  const unknown = (config.jobs.queues ?? []).filter((queue) => !known.includes(queue));
  if (unknown.length)
    throw new StartUpError(`WORKER_QUEUES: unknown queue ${unknown.join(', ')} (known: ${known.join(', ')})`);
}

/**
 * One worker host per queue the `jobs` use (those WORKER_QUEUES lists, when set), with the BullMQ options from AppConfig: the
 * concurrency the queue's job types ask for (WORKER_CONCURRENCY by default) and JOB_LOCK_MS.
 * @Processor() options are fixed where a class is declared, before any config exists, so each
 * queue gets its own subclass, decorated here: when Nest builds the provider, which is before
 * @nestjs/bullmq reads it and builds the worker. When tracing is on, each job runs in a consumer
 * span continuing the trace its record carries. The workers start taking jobs once WorkerStart
 * has checked the jobs against their handlers.
 */
export function queueWorkers(jobs: JobDefinition[]): Provider[] {
  const workerJobs = new WorkerJobs(jobs);
  const hosts = workerJobs.queues.map((queue): Provider => {
    const host = class extends QueueWorkerHost {};
    Object.defineProperty(host, 'name', { value: `${queue}QueueWorker` });
    return {
      provide: host,
      inject: [AppConfig, ModuleRef],
      useFactory: async (config: AppConfig, moduleRef: ModuleRef) => {
        // Not decorated as a processor: @nestjs/bullmq starts no worker for this queue here.
        if (config.jobs.queues && !config.jobs.queues.includes(queue)) return null;
        Processor(queue, {
          concurrency: concurrency(jobs, queue, config),
          // A killed worker's jobs are retried once its locks lapse, found by the stalled check.
          lockDuration: config.jobs.lockMs,
          stalledInterval: config.jobs.lockMs,
          autorun: false,
        })(host);
        const instance = await moduleRef.create(host);
        if (!tracingEnabled()) return instance;
        const run = instance.process.bind(instance);
        instance.process = (job: Job<{ traceparent?: string }>, token?: string) =>
          runInTrace(
            job.data?.traceparent,
            `${queue} ${job.name}`,
            'consumer',
            {
              'messaging.destination.name': queue,
              'messaging.operation.name': job.name,
              'messaging.message.id': job.id,
            },
            () => run(job, token),
          );
        return instance;
      },
    };
  });
  return [{ provide: WorkerJobs, useValue: workerJobs }, ...hosts, WorkerStart];
}

/** The largest concurrency the queue's job types ask for; WORKER_CONCURRENCY when none asks. */
function concurrency(jobs: JobDefinition[], queue: string, config: AppConfig): number {
  const asked = jobs.filter((job) => job.queue.name === queue && job.concurrency).map((job) => job.concurrency!(config));
  return asked.length ? Math.max(...asked) : config.jobs.concurrency;
}
