import { stagedJob, sweepSource } from '@app/jobs';
import { FulfilOrderJob } from './store.jobs';
import { orderQueries } from './store.queries';

/** Open orders one sweep interval past their ship date (or their placing, without one). */
export const ordersSweep = sweepSource({
  name: 'orders',
  due: orderQueries.sweepDue,
  job: ([row]) =>
    stagedJob(FulfilOrderJob, { accountId: row.accountId, orderId: Number(row.id) }, { traceparent: row.traceparent }),
});
