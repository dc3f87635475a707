import { Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { JobHandlers } from '@app/jobs';
import { StartUpError } from '@app/observability';
import { WorkerJobs } from './worker-jobs';
import { workerHosts } from './worker-hosts';

/**
 * Checks, before any queue worker takes a job, that every job in JOBS has its @OnJob handler and
 * every handler's job is in JOBS (one line naming the job, and the worker does not start), then
 * starts the queue workers: they are built with autorun off (queueWorkers).
 */
@Injectable()
export class WorkerStart implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    private readonly workerJobs: WorkerJobs,
    private readonly handlers: JobHandlers,
    private readonly discovery: DiscoveryService,
  ) {}

  onModuleInit(): void {
    const listed = new Set(this.workerJobs.jobs.map((job) => job.name));
    const handled = new Set(this.handlers.jobs().map((job) => job.name));
    const unhandled = [...listed].find((name) => !handled.has(name));
    if (unhandled) throw new StartUpError(`job ${unhandled} is in JOBS but no @OnJob handler takes it`);
    const unlisted = [...handled].find((name) => !listed.has(name));
    if (unlisted) throw new StartUpError(`job ${unlisted} has an @OnJob handler but is not in JOBS`);
  }

  onApplicationBootstrap(): void {
    for (const { worker } of workerHosts(this.discovery)) {
      worker.run().catch((err: Error) => worker.emit('error', err));
    }
  }
}
