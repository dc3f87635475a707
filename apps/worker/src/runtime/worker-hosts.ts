import { DiscoveryService } from '@nestjs/core';
import { Worker } from 'bullmq';
import { MeteredWorkerHost } from './metered-worker-host';

/** The queue worker hosts of this process that have their BullMQ worker, with it. */
export function workerHosts(discovery: DiscoveryService): Array<{ host: MeteredWorkerHost; worker: Worker }> {
  return (
    discovery
      .getProviders()
      .map((wrapper): unknown => wrapper.instance)
      .filter((instance): instance is MeteredWorkerHost => instance instanceof MeteredWorkerHost)
      // A signal during start-up can come before a host has its worker (the getter throws then).
      .flatMap((host) => {
        try {
          return [{ host, worker: host.worker }];
        } catch {
          return [];
        }
      })
  );
}
