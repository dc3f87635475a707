import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@app/config';
import {
  armShutdownWatchdog,
  initTracing,
  PinoNestLogger,
  requirePostgres,
  requireRedis,
  rootLogger,
  startOrExit,
} from '@app/observability';
import { assertKnownQueues } from './runtime/queue-workers';
import { JOBS, WorkerModule } from './worker.module';

/** An application context, not an HTTP app: processors and the relay, stopped cleanly on SIGTERM. */
startOrExit('worker', async () => {
  const config = loadConfig();
  assertKnownQueues(config, JOBS);
  initTracing(config, 'worker');
  // A worker does nothing without both: say so in one line and let the orchestrator retry.
  await Promise.all([requirePostgres(config.databaseUrl), requireRedis(config)]);
  const app = await NestFactory.createApplicationContext(WorkerModule, {
    logger: new PinoNestLogger(rootLogger(config, 'worker')),
    abortOnError: false,
  });
  // Active jobs get SHUTDOWN_GRACE_MS to finish (WorkerShutdown), the rest stay queued.
  app.enableShutdownHooks();
  armShutdownWatchdog(config.shutdownGraceMs);
  await app.init();
});
