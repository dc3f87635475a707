import { Logger } from '@nestjs/common';
import { JobDefinition } from './job-definition';
import { JobQueues } from './job-queues';

// Every worker upserts the same scheduler id, so there is one across all workers; one of that id on another
// queue (the job moved) is removed. Redis away at boot: logged, and the next worker start schedules it.
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
