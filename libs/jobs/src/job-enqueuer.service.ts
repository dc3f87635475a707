import { Injectable } from '@nestjs/common';
import { JobsOptions } from 'bullmq';
import { AppConfig } from '@app/config';
import { JobCatalog } from './job-catalog';
import { JobQueues } from './job-queues';
import { OutboxRow } from './jobs.queries';

@Injectable()
export class JobEnqueuer {
  /** Every job's options but its id and delay, built once (BullMQ copies them into each job, never changes them). */
  private readonly common: JobsOptions;
  /** The same, for the jobs whose definition drops them on completion. */
  private readonly dropping: JobsOptions;

  constructor(
    private readonly queues: JobQueues,
    private readonly catalog: JobCatalog,
    config: AppConfig,
  ) {
    const { attempts, backoffMs } = config.jobs;
    this.common = {
      attempts,
      backoff: { type: 'exponential', delay: backoffMs },
      // Few completed jobs kept (each costs Redis memory): a re-enqueued id whose job is gone runs again as a no-op.
      removeOnComplete: { age: 3600, count: 1_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    };
    this.dropping = { ...this.common, removeOnComplete: true };
  }

  async enqueue(rows: OutboxRow[]): Promise<void> {
    const byQueue = new Map<string, OutboxRow[]>();
    for (const r of rows) {
      const list = byQueue.get(r.queue);
      if (list) list.push(r);
      else byQueue.set(r.queue, [r]);
    }
    await Promise.all(
      [...byQueue].map(([queue, list]) => {
        const q = this.queues.get(queue);
        // A single job (most requests) skips addBulk's pipeline.
        if (list.length === 1) {
          const { name, data, opts } = this.job(list[0]);
          return q.add(name, data, opts);
        }
        return q.addBulk(list.map((r) => this.job(r)));
      }),
    );
  }

  private job(r: OutboxRow) {
    // Only the options a job has: BullMQ copies every key (undefined ones too) twice and lists them again to pack them.
    const opts: JobsOptions = {
      ...(this.catalog.dropsCompleted(r.jobName) ? this.dropping : this.common),
      jobId: r.jobId,
    };
    if (r.runAt) opts.delay = Math.max(0, new Date(r.runAt).getTime() - Date.now());
    const deduplication = this.catalog.deduplication(r.jobName, r.payload);
    if (deduplication) opts.deduplication = deduplication;
    return {
      name: r.jobName,
      // The job carries its record's trace to the consumer span (processorProvider).
      data: r.traceparent ? { ...r.payload, traceparent: r.traceparent } : r.payload,
      opts,
    };
  }
}
