import { Injectable } from '@nestjs/common';
import { JobCatalog } from './job-catalog';
import { StagedJob } from './job-definition';
import { JobEnqueuer } from './job-enqueuer.service';
import { JobQueues } from './job-queues';
import { outboxRow } from './outbox-row';
import { RedisMemoryWatch } from './redis-memory-watch.service';

@Injectable()
export class LostJobRequeue {
  constructor(
    private readonly queues: JobQueues,
    private readonly catalog: JobCatalog,
    private readonly enqueuer: JobEnqueuer,
    private readonly redisMemory: RedisMemoryWatch,
  ) {}

  /**
   * True when BullMQ no longer holds `job` to run, nor (for a deduplicated definition) the job its own would be
   * folded into; a finished one is removed, else re-adding its id is a no-op.
   */
  async takeBackIfLost(job: StagedJob): Promise<boolean> {
    const queue = this.queues.get(job.queue);
    // Not getJobState, whose LPOS scans the whole wait list. A job BullMQ will still run has no finishedOn.
    const held = await queue.getJob(job.jobId);
    if (held && !held.finishedOn) return false;
    const deduplication = this.catalog.deduplication(job.name, job.payload);
    const holderId = deduplication && (await queue.getDeduplicationJobId(deduplication.id));
    if (holderId && holderId !== job.jobId) {
      const holder = await queue.getJob(holderId);
      if (holder && !holder.finishedOn) return false;
    }
    if (held) await queue.remove(job.jobId);
    return true;
  }

  /** No outbox row: the caller holds the records locked, and a failure leaves them due for the next pass. */
  async requeue(jobs: StagedJob[]): Promise<number> {
    if (!jobs.length || this.redisMemory.full) return 0;
    await this.enqueuer.enqueue(jobs.map((job) => outboxRow(job)));
    return jobs.length;
  }
}
