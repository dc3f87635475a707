import { Injectable } from '@nestjs/common';
import { StagedJob } from './job-definition';
import { JobEnqueuer } from './job-enqueuer.service';
import { JobQueues } from './job-queues';
import { unstagedRow } from './outbox-row';
import { RedisMemoryWatch } from './redis-memory-watch.service';

/** What the lost-job sweep asks of the queues: is a job still held, and give lost ones back. */
@Injectable()
export class LostJobRequeue {
  constructor(
    private readonly queues: JobQueues,
    private readonly enqueuer: JobEnqueuer,
    private readonly redisMemory: RedisMemoryWatch,
  ) {}

  /**
   * True when BullMQ no longer holds `job` to run by itself (never had it, or lost it). A job it
   * finished for good is removed first, else re-adding its id would be a no-op.
   */
  async takeBackIfLost(job: StagedJob): Promise<boolean> {
    const queue = this.queues.get(job.queue);
    // Not getJobState: it looks for a waiting job with LPOS, a scan of the whole wait list, and
    // a sweep through a large backlog spent 336 µs per job on it. A job BullMQ will still run
    // (waiting, delayed, active, retrying) has no finishedOn; completed and failed for good do.
    const held = await queue.getJob(job.jobId);
    if (held && !held.finishedOn) return false;
    if (held) await queue.remove(job.jobId);
    return true;
  }

  /**
   * Enqueues jobs straight to BullMQ, no outbox row, since their records are durable and locked
   * by the caller (a failure leaves them due for the next pass). Returns how many were enqueued:
   * none while Redis is above its high-water mark.
   */
  async requeue(jobs: StagedJob[]): Promise<number> {
    if (!jobs.length || this.redisMemory.full) return 0;
    await this.enqueuer.enqueue(jobs.map(unstagedRow));
    return jobs.length;
  }
}
