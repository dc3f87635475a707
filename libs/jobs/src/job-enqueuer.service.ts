import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { jobDeduplication } from './job-definition';
import { JobQueues } from './job-queues';
import { OutboxRow } from './jobs.queries';

@Injectable()
export class JobEnqueuer {
  constructor(
    private readonly queues: JobQueues,
    private readonly config: AppConfig,
  ) {}

  async enqueue(rows: OutboxRow[]): Promise<void> {
    const byQueue = new Map<string, OutboxRow[]>();
    for (const r of rows) byQueue.set(r.queue, [...(byQueue.get(r.queue) ?? []), r]);
    const { attempts, backoffMs } = this.config.jobs;
    const job = (r: OutboxRow) => ({
      name: r.jobName,
      // The job carries its record's trace to the consumer span (processorProvider).
      data: r.traceparent ? { ...r.payload, traceparent: r.traceparent } : r.payload,
      opts: {
        jobId: r.jobId,
        delay: r.runAt ? Math.max(0, new Date(r.runAt).getTime() - Date.now()) : undefined,
        attempts,
        backoff: { type: 'exponential', delay: backoffMs },
        // Few completed jobs kept (each costs Redis memory): a re-enqueued id whose job is gone runs again as a no-op.
        removeOnComplete: { age: 3600, count: 1_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
        deduplication: jobDeduplication(r.jobName, r.payload),
      },
    });
    await Promise.all(
      [...byQueue].map(([queue, list]) => {
        const q = this.queues.get(queue);
        // A single job (most requests) skips addBulk's MULTI, which cost more CPU than the enqueue itself.
        if (list.length === 1) {
          const { name, data, opts } = job(list[0]);
          return q.add(name, data, opts);
        }
        return q.addBulk(list.map(job));
      }),
    );
  }
}
