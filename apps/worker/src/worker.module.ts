import { Module } from '@nestjs/common';
import { ConfigModule } from '@app/config';
import { featureModules } from '@app/features';
import { DatabaseModule } from '@app/database';
import { FanOutEventJob, FanOutPendingEventsJob } from '@app/events';
import { JobsModule, RetentionJob } from '@app/jobs';
import { ProcessMessageJob, ProcessMessagesJob } from '@app/messages';
import { ReadinessService, TracingFlushService } from '@app/observability';
import { RedisModule } from '@app/redis';
import { FulfilOrderJob } from '@app/store';
import { AggregateUsageJob } from '@app/usage';
import { DeliverWebhookBatchJob, DeliverWebhookJob } from '@app/webhooks';
import { OpsServerService } from './ops/ops-server.service';
import { QueueDashboardService } from './ops/queue-dashboard.service';
import { WorkerStateService } from './ops/worker-state.service';
import { ConsumerWatch } from './runtime/consumer-watch.service';
import { QueueWorkers } from './runtime/queue-workers';
import { WorkerJobs } from './runtime/worker-jobs';
import { WorkerShutdown } from './runtime/worker-shutdown';

/**
 * The jobs this worker runs: their handlers are the features' @OnJob methods, and their queues
 * are the queues the worker consumes. A new job type is declared in its feature (defineJob) and
 * listed here; the worker refuses to start when a job here has no handler or a handler's job is
 * not here (QueueWorkers).
 */
export const JOBS = [
  ProcessMessagesJob,
  ProcessMessageJob,
  FulfilOrderJob,
  FanOutEventJob,
  FanOutPendingEventsJob,
  DeliverWebhookJob,
  DeliverWebhookBatchJob,
  RetentionJob,
  AggregateUsageJob,
];

/** The worker: the BullMQ runtime over the feature libraries, the outbox relay, the sweep and the ops server; no API. */
@Module({
  imports: [
    ConfigModule,
    DatabaseModule.forRoot('worker'),
    RedisModule,
    JobsModule.register('worker'),
    ...featureModules('worker'),
  ],
  providers: [
    { provide: WorkerJobs, useValue: new WorkerJobs(JOBS) },
    QueueWorkers,
    WorkerShutdown,
    ConsumerWatch,
    ReadinessService,
    OpsServerService,
    QueueDashboardService,
    TracingFlushService,
    WorkerStateService,
  ],
})
export class WorkerModule {}
