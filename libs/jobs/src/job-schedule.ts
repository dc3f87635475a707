import { Logger } from '@nestjs/common';
import { JobDefinition } from './job-definition';
import { JobQueues } from './job-queues';

/**
 * Runs `definition` every `everyMs` across all workers: a BullMQ job scheduler on the job's
 * queue, which every worker upserts under the same id, so there is one, and each run goes to
 * whichever worker takes it. A scheduler of that id on another queue (the job moved queues) is
 * removed. Redis not reachable yet at boot (or the queue not registered in this process): logged;
 * the next worker start schedules it.
 */
export async function scheduleJob(
  queues: JobQueues,
  definition: JobDefinition<Record<string, never>>,
  everyMs: number,
  logger: Logger,
): Promise<void> {
  try {
    const id = definition.jobId({});
    const queue = queues.get(definition.queue.name);
    await Promise.all([
      queue.upsertJobScheduler(
        id,
        { every: everyMs },
        { name: definition.name, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
      ),
      ...queues
        .all()
        .filter((other) => other !== queue)
        .map((other) => other.removeJobScheduler(id)),
    ]);
  } catch (err) {
    logger.warn({ err: { message: (err as Error).message } }, `${definition.name} not scheduled yet`);
  }
}
