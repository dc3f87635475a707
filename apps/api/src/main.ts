import { setFlagsFromString } from 'node:v8';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { loadConfig } from '@app/config';
import {
  initTracing,
  PinoNestLogger,
  requirePortsFree,
  requirePostgres,
  rootLogger,
  shareModuleSearchPaths,
  startOrExit,
} from '@app/observability';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { serve } from './http-server';

// Bounds the API's RSS at no throughput cost (docs/internals/decisions/0010-heap-growing-percent.md); read at each full GC.
setFlagsFromString('--heap-growing-percent=50');

startOrExit('api', async () => {
  const config = loadConfig();
  const tracing = initTracing(config, 'api');
  rootLogger(config, 'api').info(tracing.fields, tracing.message);
  await requirePortsFree({ PORT: config.port, METRICS_PORT: config.metricsPort }, config.bindAddress);
  // An unreachable Postgres is one line, not TypeORM's retries; without Redis the API serves degraded.
  await requirePostgres(config.databaseUrl, config.databaseHosts);
  // Nothing printed by Nest's console logger, and a start-up error comes back here (abortOnError).
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    logger: new PinoNestLogger(rootLogger(config, 'api')),
    abortOnError: false,
  });
  configureApp(app);
  await serve(app, config);
  // Booted: what is loaded now stays loaded (docs/internals/decisions/0052-smaller-heap-after-boot.md).
  shareModuleSearchPaths();
});
