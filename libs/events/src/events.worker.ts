import { WorkerFeature } from '@app/jobs';
import { FanOutEventJob, FanOutPendingEventsJob } from './event.jobs';
import { eventsRetention } from './events.retention';
import { eventsSweep } from './events.sweep';

/** The event log's work on the worker: fan-out (handled by @app/webhooks), its sweep and its retention. */
export const EVENTS_WORKER: WorkerFeature = {
  jobs: [FanOutEventJob, FanOutPendingEventsJob],
  sweeps: [eventsSweep],
  retention: [eventsRetention],
};
