import { Counter } from 'prom-client';

let requeued: Counter<'source'> | undefined;

/** Created by the worker's first sweep, so the API's /metrics carries no idle copy. */
export function sweepRequeued(): Counter<'source'> {
  return (requeued ??= new Counter({
    name: 'petstore_sweep_jobs_requeued_total',
    help: 'Jobs the lost-job sweep gave back, by source table',
    labelNames: ['source'] as const,
  }));
}
