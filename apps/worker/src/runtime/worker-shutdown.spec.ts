import { Worker } from 'bullmq';
import { loadConfig } from '@app/config';
import { queueWorkersOf } from './queue-workers.fake';
import { WorkerShutdown } from './worker-shutdown';

/** A worker whose connection cannot be had: on a cluster after a failover, its backend's client getter rejects. */
function workerWithoutRedis() {
  const calls: string[] = [];
  const worker = {
    backend: {
      get client() {
        return Promise.reject(new Error('None of startup nodes is available'));
      },
    },
    pause: (doNotWait: boolean) => (calls.push(`pause(${doNotWait})`), Promise.resolve()),
    close: (force: boolean) => (calls.push(`close(${force})`), Promise.resolve()),
  };
  return { worker: worker as unknown as Worker, calls };
}

describe('WorkerShutdown', () => {
  it('closes a worker whose Redis connection cannot be had, without waiting for its jobs', async () => {
    const { worker, calls } = workerWithoutRedis();
    const { workers } = queueWorkersOf(worker);
    const config = loadConfig({ SHUTDOWN_GRACE_MS: '60000' });

    await expect(new WorkerShutdown(workers, config).beforeApplicationShutdown()).resolves.toBeUndefined();
    expect(calls).toEqual(['pause(true)', 'close(true)']);
  });
});
