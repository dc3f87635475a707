import { ModuleRef } from '@nestjs/core';
import { Worker } from 'bullmq';
import { loadConfig } from '@app/config';
import { consumerStalled } from '../ops/worker-metrics';
import { ConsumerWatch } from './consumer-watch.service';
import { queueWorkersOf } from './queue-workers.fake';

const STALL_MS = 60_000;

/** A watch over one `webhooks` worker whose queue has `queue.waiting` jobs (a rejection: Redis away). */
function setUp() {
  // Only the date: within()'s timers stay real.
  jest.useFakeTimers({ doNotFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'nextTick', 'queueMicrotask'] });
  const state = { waiting: 3 as number | Error, paused: false };
  const worker = {
    name: 'webhooks',
    closing: undefined,
    isRunning: () => true,
    isPaused: () => state.paused,
  } as unknown as Worker;
  const { workers, consumer: host } = queueWorkersOf(worker);
  const queue = {
    getWaitingCount: () =>
      state.waiting instanceof Error ? Promise.reject(state.waiting) : Promise.resolve(state.waiting),
  };
  const moduleRef = { get: () => queue } as unknown as ModuleRef;
  const config = loadConfig({ WORKER_STALL_MS: String(STALL_MS) });
  const watch = new ConsumerWatch(workers, moduleRef, config);
  /** Checks now and again `ms` later. */
  const checkOver = async (ms: number) => {
    await watch.check();
    jest.setSystemTime(Date.now() + ms);
    await watch.check();
  };
  return { state, host, checkOver };
}

/** The queues petstore_queue_consumer_stalled marks (1): what operators see. */
async function stalledQueues(): Promise<string[]> {
  return (await consumerStalled.get()).values.filter((v) => v.value === 1).map((v) => String(v.labels.queue));
}

describe('ConsumerWatch', () => {
  afterEach(() => jest.useRealTimers());

  it('reports a queue whose jobs have waited WORKER_STALL_MS while the worker took none', async () => {
    const { checkOver } = setUp();
    await checkOver(STALL_MS);
    expect(await stalledQueues()).toEqual(['webhooks']);
  });

  it('does not report a queue that waited less than WORKER_STALL_MS', async () => {
    const { checkOver } = setUp();
    await checkOver(STALL_MS - 1);
    expect(await stalledQueues()).toEqual([]);
  });

  it('counts the wait again from the last job the worker started', async () => {
    const { host, checkOver } = setUp();
    await checkOver(STALL_MS / 2);
    // A retry's start (attemptsMade > 0) records no lag: only the start is under test.
    host.onJobActive({ attemptsMade: 1 } as never);
    await checkOver(STALL_MS / 2);
    expect(await stalledQueues()).toEqual([]);
  });

  it('does not report a stall while Redis does not answer (an outage is no stall)', async () => {
    const { state, checkOver } = setUp();
    state.waiting = new Error('Connection is closed.');
    await checkOver(STALL_MS * 2);
    expect(await stalledQueues()).toEqual([]);
  });

  it('does not report a paused worker (shutting down)', async () => {
    const { state, checkOver } = setUp();
    state.paused = true;
    await checkOver(STALL_MS * 2);
    expect(await stalledQueues()).toEqual([]);
  });

  it('clears the report once the queue has no job waiting', async () => {
    const { state, checkOver } = setUp();
    await checkOver(STALL_MS);
    state.waiting = 0;
    await checkOver(1);
    expect(await stalledQueues()).toEqual([]);
  });
});
