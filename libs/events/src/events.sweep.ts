import { stagedJob, sweepSource } from '@app/jobs';
import { FanOutPendingEventsJob } from './event.jobs';
import { eventQueries } from './events.queries';

/**
 * Events not yet fanned out one sweep interval after they were recorded. Their job is the account's pending fan-out:
 * one the event started, or the one waiting that its own was folded into (deduplication), which the sweep asks for.
 */
export const eventsSweep = sweepSource({
  name: 'events',
  due: eventQueries.sweepDue,
  job: ([row]) =>
    stagedJob(
      FanOutPendingEventsJob,
      { accountId: row.accountId, eventId: Number(row.id) },
      { traceparent: row.traceparent },
    ),
});
