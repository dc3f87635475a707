import { defineJob, defineQueue } from '@app/jobs';

/** Event fan-out: short jobs on Postgres. */
export const EventQueue = defineQueue('events');

/** Staged only for an event with a subscriber when recorded; handled by @app/webhooks, which owns the deliveries. */
export const FanOutEventJob = defineJob<{ accountId: number; eventId: number }>({
  name: 'event.fan-out',
  queue: EventQueue,
  jobId: ({ eventId }) => `event-${eventId}`,
  concurrency: (config) => config.jobs.batchSize,
});
