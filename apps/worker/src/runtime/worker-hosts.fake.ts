import { DiscoveryService } from '@nestjs/core';
import { Worker } from 'bullmq';
import { MeteredWorkerHost } from './metered-worker-host';

class FakeHost extends MeteredWorkerHost {
  process(): Promise<void> {
    return Promise.resolve();
  }
}

/** For unit specs: a DiscoveryService that finds one queue worker host holding `worker`. */
export function discoveryOf(worker: Worker): { discovery: DiscoveryService; host: MeteredWorkerHost } {
  const host = new FakeHost();
  Object.defineProperty(host, 'worker', { get: () => worker });
  const discovery = { getProviders: () => [{ instance: host }] } as unknown as DiscoveryService;
  return { discovery, host };
}
