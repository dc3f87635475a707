import { WorkerFeature } from '@app/jobs';
import { ordersSweep } from './orders.sweep';
import { FulfilOrderJob } from './store.jobs';

/** The store's work on the worker: fulfilment, and the sweep of open orders. */
export const STORE_WORKER: WorkerFeature = { jobs: [FulfilOrderJob], sweeps: [ordersSweep], retention: [] };
