import { DiscoveryService, ModuleRef } from '@nestjs/core';
import { Worker } from 'bullmq';
import { loadConfig } from '@app/config';
import { ConsumerWatch } from './consumer-watch.service';
import { MeteredWorkerHost } from './metered-worker-host';

class Host extends MeteredWorkerHost {
  process(): Promise<void> {
    return Promise.resolve();
  }
}

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
  const host = new Host();
  Object.defineProperty(host, 'worker', { get: () => worker });
  const queue = {
    getWaitingCount: () =>
      state.waiting instanceof Error ? Promise.reject(state.waiting) : Promise.resolve(state.waiting),
  };
  const discovery = { getProviders: () => [{ instance: host }] } as unknown as DiscoveryService;
  const moduleRef = { get: () => queue } as unknown as ModuleRef;
  const config = loadConfig({ WORKER_STALL_MS: String(STALL_MS) });
  const watch = new ConsumerWatch(discovery, moduleRef, config);
  /** Checks now and again `ms` later. */
  const checkOver = async (ms: number) => {
    await watch.check();
    jest.setSystemTime(Date.now() + ms);
    await watch.check();
  };
  return { watch, state, host, checkOver };
}

describe('ConsumerWatch', () => {
  afterEach(() => jest.useRealTimers());

  it('reports a queue whose jobs have waited WORKER_STALL_MS while the worker took none', async () => {
    const { watch, checkOver } = setUp();
    await checkOver(STALL_MS);
    expect(watch.stalledQueues()).toEqual(['webhooks']);
  });

  it('does not report a queue that waited less than WORKER_STALL_MS', async () => {
    const { watch, checkOver } = setUp();
    await checkOver(STALL_MS - 1);
    expect(watch.stalledQueues()).toEqual([]);
  });

  it('counts the wait again from the last job the worker started', async () => {
    const { watch, host, checkOver } = setUp();
    await checkOver(STALL_MS / 2);
    // A retry's start (attemptsMade > 0) records no lag: only the start is under test.
    host.onJobActive({ attemptsMade: 1 } as never);
    await checkOver(STALL_MS / 2);
    expect(watch.stalledQueues()).toEqual([]);
  });

  it('does not report a stall while Redis does not answer (an outage is not a reason to restart)', async () => {
    const { watch, state, checkOver } = setUp();
    state.waiting = new Error('Connection is closed.');
    await checkOver(STALL_MS * 2);
    expect(watch.stalledQueues()).toEqual([]);
  });

  it('does not report a paused worker (shutting down)', async () => {
    const { watch, state, checkOver } = setUp();
    state.paused = true;
    await checkOver(STALL_MS * 2);
    expect(watch.stalledQueues()).toEqual([]);
  });

  it('clears the report once the queue has no job waiting', async () => {
    const { watch, state, checkOver } = setUp();
    await checkOver(STALL_MS);
    state.waiting = 0;
    await checkOver(1);
    expect(watch.stalledQueues()).toEqual([]);
  });
});
