import { Queue } from 'bullmq';
import { JobDefinition } from './job-definition';
import { watchQueueErrors } from './queue-errors';

/** The process's queues, one per queue of its catalog's jobs, built by JobsModule from their tokens. */
export class JobQueues {
  private readonly byName: ReadonlyMap<string, Queue>;

  constructor(queues: readonly Queue[]) {
    for (const queue of queues) watchQueueErrors(queue);
    this.byName = new Map(queues.map((queue) => [queue.name, queue]));
  }

  get(name: string): Queue {
    const queue = this.byName.get(name);
    if (!queue) throw new Error(`queue ${name} is not registered in this process`);
    return queue;
  }

  all(): Queue[] {
    return [...this.byName.values()];
  }

  async discard<P extends object>(job: JobDefinition<P>, payload: P): Promise<void> {
    await this.get(job.queue.name).remove(job.jobId(payload));
  }
}
