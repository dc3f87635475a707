import { stagedJob, sweepSource } from '@app/jobs';
import { FanOutEventJob } from './event.jobs';
import { eventQueries } from './events.queries';

/** Events not yet fanned out one sweep interval after they were recorded. */
export const EventsSweepSource = sweepSource({
  name: 'events',
  dueSql: eventQueries.sweepDue().text,
  job: (row) =>
    stagedJob(FanOutEventJob, { accountId: row.accountId, eventId: Number(row.id) }, { traceparent: row.traceparent }),
});
