import { setTimeout as sleep } from 'node:timers/promises';
import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { Worker } from 'bullmq';
import { AppConfig } from '@app/config';
import { CLOSE_BUDGET_MS } from '@app/lifecycle';
import { QueueWorkers } from './queue-workers';

/**
 * Stops the BullMQ workers within SHUTDOWN_GRACE_MS, before QueueWorkers closes them (a
 * plain close() waits for active jobs and for Redis without limit: a job stuck on a slow
 * webhook target, or Redis away, kept a worker alive for minutes after SIGTERM).
 * - Redis there: no new job is taken and active jobs get SHUTDOWN_GRACE_MS to finish.
 * - Redis away: nothing waits, since no job could record its outcome anyway.
 * Then each worker is closed by force: its connections are dropped, not QUIT, and a job still
 * running is left to the stalled-job check (JOB_LOCK_MS), which runs it again elsewhere
 * (handlers are idempotent). The later close() by QueueWorkers returns this one.
 */
@Injectable()
export class WorkerShutdown implements BeforeApplicationShutdown {
  private readonly logger = new Logger(WorkerShutdown.name);

  constructor(
    private readonly queueWorkers: QueueWorkers,
    private readonly config: AppConfig,
  ) {}

  async beforeApplicationShutdown(): Promise<void> {
    const workers = this.queueWorkers.consumers.map(({ worker }) => worker);
    const finished = await Promise.race([
      Promise.all(workers.map((w) => this.finishActiveJobs(w))).then(() => true),
      sleep(this.config.shutdownGraceMs, false, { ref: false }),
    ]);
    if (!finished)
      this.logger.warn(
        { graceMs: this.config.shutdownGraceMs },
        'grace period over: jobs still active are left to be retried',
      );
    await Promise.race([
      Promise.allSettled(workers.map((w) => w.close(true))),
      sleep(CLOSE_BUDGET_MS, undefined, { ref: false }),
    ]);
  }

  private async finishActiveJobs(worker: Worker): Promise<void> {
    // Asking for the client reconnects it, and that rejects while Redis is away (on a cluster:
    // "None of startup nodes is available" after a failover): then it is away, and nothing waits.
    const ready = await worker.backend.client.then(
      (client) => client.status === 'ready',
      () => false,
    );
    await worker.pause(!ready).catch(() => undefined);
  }
}
