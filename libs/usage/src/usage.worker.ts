import { WorkerFeature } from '@app/jobs';
import { AggregateUsageJob } from './usage.jobs';
import { usageHoursRetention, usageMinutesRetention } from './usage.retention';

/** Usage's work on the worker: the minutes' aggregation from Redis, and the retention of both tables. */
export const USAGE_WORKER: WorkerFeature = {
  jobs: [AggregateUsageJob],
  sweeps: [],
  retention: [usageMinutesRetention, usageHoursRetention],
};
