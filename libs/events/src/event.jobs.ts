import { defineJob, defineQueue } from '@app/jobs';

/** Event fan-out: short jobs on Postgres. */
export const EventQueue = defineQueue('events');

/** One event's fan-out, as releases before FanOutPendingEventsJob staged it; handled by @app/webhooks. */
export const FanOutEventJob = defineJob<{ accountId: number; eventId: number }>({
  name: 'event.fan-out',
  queue: EventQueue,
  jobId: ({ eventId }) => `event-${eventId}`,
  concurrency: (config) => config.jobs.batchSize,
});

// Staged for the events a unit of work records with a subscriber: while one waits, those of the account's later events
// are dropped (deduplication), and it fans out every event of the account not fanned out when it runs.
export const FanOutPendingEventsJob = defineJob<{ accountId: number; eventId: number }>({
  name: 'event.fan-out-pending',
  queue: EventQueue,
  jobId: ({ eventId }) => `events-pending-${eventId}`,
  deduplicationId: ({ accountId }) => `event-fan-out-${accountId}`,
  concurrency: (config) => config.jobs.batchSize,
});
