import { Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { JobDefinition } from './job-definition';
import { watchQueueErrors } from './queue-errors';

@Injectable()
export class JobQueues {
  private readonly byName = new Map<string, Queue>();

  add(queue: Queue): Queue {
    watchQueueErrors(queue);
    this.byName.set(queue.name, queue);
    return queue;
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
