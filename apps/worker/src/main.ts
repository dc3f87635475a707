import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@app/config';
import { JobCatalog } from '@app/jobs';
import { armShutdownWatchdog, requirePortsFree, requirePostgres, requireRedis, startOrExit } from '@app/lifecycle';
import { initTracing, PinoNestLogger, rootLogger } from '@app/observability';
import { assertKnownQueues } from './runtime/queue-workers';
import { WORKER_FEATURES, WorkerModule } from './worker.module';

/** An application context, not an HTTP app: processors and the relay, stopped cleanly on SIGTERM. */
startOrExit('worker', async () => {
  const config = loadConfig();
  assertKnownQueues(config, new JobCatalog(WORKER_FEATURES));
  const tracing = initTracing(config, 'worker');
  rootLogger(config, 'worker').info(tracing.fields, tracing.message);
  await requirePortsFree({ WORKER_PORT: config.workerPort }, config.bindAddress);
  // A worker does nothing without both: say so in one line and let the orchestrator retry.
  await Promise.all([requirePostgres(config.databaseUrl, config.databaseHosts), requireRedis(config)]);
  const app = await NestFactory.createApplicationContext(WorkerModule, {
    logger: new PinoNestLogger(rootLogger(config, 'worker')),
    abortOnError: false,
  });
  // Active jobs get SHUTDOWN_GRACE_MS to finish (WorkerShutdown), the rest stay queued. Exit 0, not
  // Nest's re-raised signal: a supervisor then reads a clean stop, and the log's last lines are written.
  const logger = new Logger('Worker');
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    const started = Date.now();
    logger.log({ signal }, 'shutting down: no new jobs, active jobs finishing');
    await app.close();
    logger.log({ ms: Date.now() - started }, 'stopped cleanly');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, (s) => void shutdown(s));
  armShutdownWatchdog(config.shutdownGraceMs);
  await app.init();
});
