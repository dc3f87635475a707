import { defineJob, MaintenanceQueue } from '@app/jobs';

/** Copies finished minutes of usage from Redis into Postgres; scheduled, never staged. */
export const AggregateUsageJob = defineJob<Record<string, never>>({
  name: 'usage.aggregate',
  queue: MaintenanceQueue,
  jobId: () => 'usage-aggregate',
});
