import { WorkerFeature } from '@app/jobs';
import { DeliverWebhookBatchJob, DeliverWebhookJob } from './webhook.jobs';
import { webhookDeliveriesRetention, webhookDeliveryAttemptsRetention } from './webhooks.retention';
import { webhookDeliveriesSweep } from './webhooks.sweep';

/** Webhooks' work on the worker: deliveries, their sweep and their retention. */
export const WEBHOOKS_WORKER: WorkerFeature = {
  jobs: [DeliverWebhookJob, DeliverWebhookBatchJob],
  sweeps: [webhookDeliveriesSweep],
  // After the deliveries: the attempts of the deliveries it removed go in the same run.
  retention: [webhookDeliveriesRetention, webhookDeliveryAttemptsRetention],
};
