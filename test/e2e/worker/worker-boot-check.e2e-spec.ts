import { getQueueToken } from '@nestjs/bullmq';
import { Test } from '@nestjs/testing';
import { Queue } from 'bullmq';
import { AppConfig, loadConfig } from '@app/config';
import { defineJob, JobCatalog, JobDefinition } from '@app/jobs';
import { MessageQueue } from '@app/messages';
import { StartUpError } from '@app/lifecycle';
import { AggregateUsageJob } from '@app/usage';
import { WORKER_FEATURES, WorkerModule } from '../../../apps/worker/src/worker.module';

const JOBS = new JobCatalog(WORKER_FEATURES).jobs;

/**
 * The worker's start-up check of JOBS against the @OnJob handlers, on the real worker module,
 * Postgres and Redis: JOBS is replaced by a wrong list, everything else is as the worker builds it.
 */
describe('worker start-up: every job in JOBS has its handler, every handler its job', () => {
  const config = loadConfig(process.env);
  const probeId = 'boot-check-probe';
  let messages: Queue;

  /** Boots the worker with `jobs` as JOBS; the error that stopped it, or undefined. */
  async function bootWith(jobs: JobDefinition[]): Promise<Error | undefined> {
    const worker = await Test.createTestingModule({ imports: [WorkerModule] })
      .overrideProvider(AppConfig)
      .useValue(config)
      .overrideProvider(JobCatalog)
      .useValue(new JobCatalog([{ jobs, sweeps: [], retention: [] }]))
      .compile();
    messages = worker.get<Queue>(getQueueToken(MessageQueue.name), { strict: false });
    await messages.add('boot-check.probe', {}, { jobId: probeId });
    try {
      await worker.init();
      return undefined;
    } catch (err) {
      // The worker's queue workers would have had the probe by now, had they started.
      await new Promise((resolve) => setTimeout(resolve, 500));
      return err as Error;
    } finally {
      expect(await messages.getJobState(probeId)).toBe('waiting');
      await messages.remove(probeId);
      await worker.close();
    }
  }

  it('refuses to start, in one line naming the job, when a job in JOBS has no handler', async () => {
    const unhandled = defineJob<{ id: string }>({
      name: 'boot-check.unhandled',
      queue: MessageQueue,
      jobId: ({ id }) => id,
    });
    const err = await bootWith([...JOBS, unhandled]);
    expect(err).toBeInstanceOf(StartUpError);
    expect(err?.message).toBe('job boot-check.unhandled is in WORKER_FEATURES but no @OnJob handler takes it');
  });

  it('refuses to start, in one line naming the job, when a handler’s job is not in JOBS', async () => {
    const err = await bootWith(JOBS.filter((job) => job !== AggregateUsageJob));
    expect(err).toBeInstanceOf(StartUpError);
    expect(err?.message).toBe('job usage.aggregate has an @OnJob handler but is not in WORKER_FEATURES');
  });
});
