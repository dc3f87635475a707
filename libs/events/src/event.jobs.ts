import { defineJob, defineQueue } from '@app/jobs';

/** Event fan-out: short jobs on Postgres. */
export const EventQueue = defineQueue('events');

/**
 * Hands one event to the webhooks subscribed to it. Staged by the event log for each event that
 * has a subscriber when it is recorded; handled by @app/webhooks, which owns the deliveries, in
 * batches of the WORKER_BATCH_SIZE jobs a worker runs at once.
 */
export const FanOutEventJob = defineJob<{ accountId: number; eventId: number }>({
  name: 'event.fan-out',
  queue: EventQueue,
  jobId: ({ eventId }) => `event-${eventId}`,
  concurrency: (config) => config.jobs.batchSize,
});
