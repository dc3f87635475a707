import { JobDefinition } from '@app/jobs';

/** The jobs this worker runs (JOBS in worker.module.ts), and the queues they use. */
export class WorkerJobs {
  constructor(readonly jobs: JobDefinition[]) {}

  /** The names of the queues the jobs use, each once. */
  get queues(): string[] {
    return [...new Set(this.jobs.map((job) => job.queue.name))];
  }
}
