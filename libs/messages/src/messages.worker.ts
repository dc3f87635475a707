import { WorkerFeature } from '@app/jobs';
import { ProcessMessageJob, ProcessMessagesJob } from './message.jobs';
import { messagesRetention } from './messages.retention';
import { messagesSweep } from './messages.sweep';

/** Messages' work on the worker: processing, its sweep and its retention. */
export const MESSAGES_WORKER: WorkerFeature = {
  jobs: [ProcessMessagesJob, ProcessMessageJob],
  sweeps: [messagesSweep],
  retention: [messagesRetention],
};
