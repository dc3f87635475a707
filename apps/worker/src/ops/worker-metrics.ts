import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge, Histogram } from 'prom-client';
import { sweepRequeued } from '@app/jobs';
import { webhookDeliveries } from '@app/webhooks';

/**
 * Every metric of the worker, on prom-client's default registry (served by the ops server's
 * /metrics). Loaded by the worker only, so the API's /metrics does not show idle copies.
 * Names and labels are what deploy/'s dashboards and alert rules read: rename with them.
 */

const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const jobsCompleted = new Counter({
  name: 'petstore_jobs_completed_total',
  help: 'Jobs that finished successfully, by queue',
  labelNames: ['queue'] as const,
});

export const jobsFailed = new Counter({
  name: 'petstore_jobs_failed_total',
  help: 'Failed job attempts, by queue; final="true" when no attempt is left',
  labelNames: ['queue', 'final'] as const,
});

export const jobDuration = new Histogram({
  name: 'petstore_job_duration_seconds',
  help: 'Processing time of a job attempt (completed or failed), by queue',
  labelNames: ['queue'] as const,
  buckets: JOB_BUCKETS,
});

export const consumerStalled = new Gauge({
  name: 'petstore_queue_consumer_stalled',
  help: 'Whether this worker has stopped taking jobs from a queue that has jobs waiting (1: stalled), by queue',
  labelNames: ['queue'] as const,
});

export const jobLag = new Histogram({
  name: 'petstore_job_lag_seconds',
  help: 'Time from when a job became due (enqueued, or enqueued plus its delay) to its first processing start',
  labelNames: ['queue'] as const,
  buckets: JOB_BUCKETS,
});

/** Every series of `queues` starts at 0, so a first failure is an increase that rate() and alerts can see. */
export function countFromZero(queues: string[]): void {
  for (const queue of queues) {
    jobsCompleted.inc({ queue }, 0);
    for (const final of ['true', 'false']) jobsFailed.inc({ queue, final }, 0);
  }
}
// The counters features own, created here so the worker exports them from its start.
webhookDeliveries();
sweepRequeued();

/** Job counts per queue and state, and the outbox backlog, as read at scrape time. */
export interface WorkerState {
  queues(): Promise<Record<string, Record<string, number>>>;
  outbox(): Promise<{ waiting: number; oldestAgeSeconds: number }>;
}

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * How long a scrape waits for Redis or Postgres. A dependency that is away must not hang the
 * scrape: the gauges then keep their previous values (or are absent if never read).
 */
const STATE_READ_TIMEOUT_MS = 1_000;

let state: WorkerState | undefined;
const pending = new Map<keyof WorkerState, Promise<unknown>>();

/** The worker's state readers, set once at start-up (cleared on shutdown). */
export function readWorkerStateFrom(source: WorkerState | undefined): void {
  state = source;
}

/**
 * One read of `what` at a time: a read still hanging from an earlier scrape is awaited again
 * rather than started anew, so commands do not pile up while a dependency is away.
 */
async function read<K extends keyof WorkerState>(what: K): Promise<Awaited<ReturnType<WorkerState[K]>> | undefined> {
  if (!state) return undefined;
  let running = pending.get(what);
  if (!running) {
    running = state[what]().finally(() => pending.delete(what));
    pending.set(what, running);
  }
  const timedOut = sleep(STATE_READ_TIMEOUT_MS, undefined, { ref: false });
  try {
    return (await Promise.race([running, timedOut])) as Awaited<ReturnType<WorkerState[K]>> | undefined;
  } catch {
    return undefined; // a failed read leaves the previous values; readiness reports the outage
  }
}

new Gauge({
  name: 'petstore_queue_jobs',
  help: 'Jobs per queue and state (waiting, active, delayed, failed), read at scrape time',
  labelNames: ['queue', 'state'] as const,
  async collect() {
    const counts = await read('queues');
    for (const [queue, byState] of Object.entries(counts ?? {})) {
      for (const s of QUEUE_STATES) this.set({ queue, state: s }, byState[s] ?? 0);
    }
  },
});

new Gauge({
  name: 'petstore_outbox_rows_waiting',
  help: 'Outbox rows not yet relayed to the queues, read at scrape time',
  async collect() {
    const outbox = await read('outbox');
    if (outbox) this.set(outbox.waiting);
  },
});

new Gauge({
  name: 'petstore_outbox_oldest_row_age_seconds',
  help: 'Age of the oldest outbox row (0 when empty), read at scrape time',
  async collect() {
    const outbox = await read('outbox');
    if (outbox) this.set(outbox.oldestAgeSeconds);
  },
});
