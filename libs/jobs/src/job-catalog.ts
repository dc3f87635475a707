import { JobDefinition } from './job-definition';
import { RetentionSource } from './retention-source';
import { SweepSource } from './sweep-source';

/** What a feature runs on the worker, as plain lists (its `<feature>.worker.ts`); each app names every feature's. */
export interface WorkerFeature {
  readonly jobs: readonly JobDefinition[];
  /** The lost-job sweep's sources, for the tables the feature owns. */
  readonly sweeps: readonly SweepSource[];
  /** In the order retention runs them. */
  readonly retention: readonly RetentionSource[];
}

/** The lists an app names, joined (JobsModule provides it): the jobs by name, their queues, the sweeps, retention. */
export class JobCatalog {
  readonly jobs: readonly JobDefinition[];
  readonly sweeps: readonly SweepSource[];
  readonly retention: readonly RetentionSource[];
  private readonly byName: ReadonlyMap<string, JobDefinition>;

  constructor(features: readonly WorkerFeature[]) {
    this.jobs = unique(
      'job',
      features.flatMap((f) => f.jobs),
    );
    this.sweeps = unique(
      'sweep source',
      features.flatMap((f) => f.sweeps),
    );
    this.retention = unique(
      'retention source',
      features.flatMap((f) => f.retention),
    );
    this.byName = new Map(this.jobs.map((job) => [job.name, job]));
  }

  /** The names of the queues the jobs use, each once. */
  get queues(): string[] {
    return [...new Set(this.jobs.map((job) => job.queue.name))];
  }

  /** BullMQ's deduplication for the job, if its definition asks for it; none for a job not listed (a newer release's). */
  deduplication(name: string, payload: object): { id: string } | undefined {
    const id = this.byName.get(name)?.deduplicationId?.(payload);
    return id === undefined ? undefined : { id };
  }

  /** Whether the job's definition drops it on completion. */
  dropsCompleted(name: string): boolean {
    return this.byName.get(name)?.dropCompleted === true;
  }
}

// Names key the enqueue options, the sweep's cursors and the metrics' labels: one listed twice is a wiring mistake.
function unique<T extends { name: string }>(kind: string, items: T[]): T[] {
  const seen = new Set<string>();
  for (const { name } of items) {
    if (seen.has(name)) throw new Error(`${kind} ${name} is listed twice`);
    seen.add(name);
  }
  return items;
}
