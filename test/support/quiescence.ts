import { INestApplicationContext } from '@nestjs/common';
import { Job, JobType, Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { JobDefinition, LostJobSweepService } from '@app/jobs';
import { QueueWorkers } from '../../apps/worker/src/runtime/queue-workers';
import { eventually } from './http';

/*
 * Conditions after which nothing more is on its way, for tests that check something did not happen:
 * waited on instead of a fixed sleep, which a loaded machine can make too short to see anything.
 */

/** Resolves once `method` of a running service (a periodic pass) has ended `calls` times, counting calls begun after this one. */
export async function passes<K extends string>(
  service: { [P in K]: (...args: never[]) => Promise<unknown> },
  method: K,
  calls: number,
  timeoutMs?: number,
): Promise<void> {
  const original = service[method];
  let ended = 0;
  service[method] = ((...args: never[]) => original.apply(service, args).finally(() => ended++)) as typeof original;
  try {
    await eventually(async () => ended >= calls, timeoutMs);
  } finally {
    service[method] = original;
  }
}

/** Resolves once the worker's lost-job sweep has finished `count` passes begun after this call. */
export const sweepPasses = (worker: INestApplicationContext, count: number, timeoutMs?: number) =>
  passes(worker.get<LostJobSweepService>(LostJobSweepService), 'sweepOnce', count, timeoutMs);

/**
 * Resolves once the workers have completed `runs` jobs of `job` taken after this call (a scheduled job's runs), with
 * the times those runs began: a run under way at the call does not count.
 */
export async function jobRuns(
  workers: INestApplicationContext | INestApplicationContext[],
  job: Pick<JobDefinition, 'name'>,
  runs: number,
  timeoutMs?: number,
): Promise<number[]> {
  const began = new Map<string | undefined, number>();
  const completed: number[] = [];
  const onActive = (taken: Job) => taken.name === job.name && began.set(taken.id, Date.now());
  const onCompleted = (done: Job) => began.has(done.id) && completed.push(began.get(done.id)!);
  const consumers = [workers].flat().flatMap((worker) => worker.get(QueueWorkers).consumers.map((c) => c.worker));
  for (const consumer of consumers) consumer.on('active', onActive).on('completed', onCompleted);
  try {
    await eventually(async () => completed.length >= runs, timeoutMs);
    return completed.slice(0, runs);
  } finally {
    for (const consumer of consumers) consumer.off('active', onActive).off('completed', onCompleted);
  }
}

/**
 * Resolves once every event (of the account, when given) is fanned out and none of its webhook deliveries is
 * pending: a delivery is recorded after its receiver answered, so no request is still on its way.
 */
export async function webhooksSettled(db: DataSource, accountId?: number, timeoutMs?: number): Promise<void> {
  await eventually(async () => {
    const [row] = await db.query(
      `SELECT (SELECT count(*)::int FROM events WHERE NOT fanned_out AND ($1::bigint IS NULL OR account_id = $1))
            + (SELECT count(*)::int FROM webhook_deliveries
                WHERE status = 'pending' AND ($1::bigint IS NULL OR account_id = $1)) AS busy`,
      [accountId ?? null],
    );
    return row.busy === 0;
  }, timeoutMs);
}

/** Resolves once `queue` holds no job in these states whose payload names the account. */
export async function noJobsOf(
  queue: Queue,
  accountId: number,
  states: JobType[] = ['waiting', 'prioritized', 'delayed', 'active'],
  timeoutMs?: number,
): Promise<void> {
  await eventually(
    async () => !(await queue.getJobs(states)).some((job) => job?.data?.accountId === accountId),
    timeoutMs,
  );
}
