import { Module } from '@nestjs/common';
import { ConfigModule } from '@app/config';
import { FEATURE_WORKERS, featureModules } from '@app/features';
import { DatabaseModule } from '@app/database';
import { JobsModule, PLATFORM_WORKER, WorkerFeature } from '@app/jobs';
import { ReadinessService } from '@app/lifecycle';
import { TracingFlushService } from '@app/observability';
import { RedisModule } from '@app/redis';
import { OpsServerService } from './ops/ops-server.service';
import { QueueDashboardService } from './ops/queue-dashboard.service';
import { WorkerStateService } from './ops/worker-state.service';
import { ConsumerWatch } from './runtime/consumer-watch.service';
import { QueueWorkers } from './runtime/queue-workers';
import { WorkerShutdown } from './runtime/worker-shutdown';

/**
 * What this worker runs: each feature's list (jobs, sweeps, retention sources) and the platform's. A job's handler is
 * its feature's @OnJob method; the worker refuses to start when a listed job has no handler or a handler's job is in
 * no list (QueueWorkers), and consumes the queues of the listed jobs.
 */
export const WORKER_FEATURES: readonly WorkerFeature[] = [...FEATURE_WORKERS, PLATFORM_WORKER];

/** The worker: the BullMQ runtime over the feature libraries, the outbox relay, the sweep and the ops server; no API. */
@Module({
  imports: [
    ConfigModule,
    DatabaseModule.forRoot('worker'),
    RedisModule,
    JobsModule.register('worker', WORKER_FEATURES),
    ...featureModules('worker'),
  ],
  providers: [
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
