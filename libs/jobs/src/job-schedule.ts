import { Logger } from '@nestjs/common';
import { Queue } from 'bullmq';
import { JobDefinition } from './job-definition';

/**
 * Runs `definition` every `everyMs` across all workers: a BullMQ job scheduler, which every worker
 * upserts under the same id, so there is one, and each run goes to whichever worker takes it.
 * Redis not reachable yet at boot: logged; the next worker start schedules it.
 */
export async function scheduleJob(
  queue: Queue,
  definition: JobDefinition<Record<string, never>>,
  everyMs: number,
  logger: Logger,
): Promise<void> {
  await queue
    .upsertJobScheduler(
      definition.jobId({}),
      { every: everyMs },
      { name: definition.name, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    )
    .catch((err: Error) => logger.warn({ err: { message: err.message } }, `${definition.name} not scheduled yet`));
}
