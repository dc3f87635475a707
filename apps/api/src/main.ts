import { setFlagsFromString } from 'node:v8';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@app/config';
import { requirePortsFree, requirePostgres, startOrExit } from '@app/lifecycle';
import { initTracing, PinoNestLogger, rootLogger } from '@app/observability';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { ApiHttpServer } from './http-server';

// Bounds the API's RSS at no throughput cost (docs/internals/decisions/0010-heap-growing-percent.md); read at each full GC.
setFlagsFromString('--heap-growing-percent=50');

startOrExit('api', async () => {
  const config = loadConfig();
  const tracing = initTracing(config, 'api');
  rootLogger(config, 'api').info(tracing.fields, tracing.message);
  await requirePortsFree({ PORT: config.port, METRICS_PORT: config.metricsPort }, config.bindAddress);
  // An unreachable Postgres is one line, not TypeORM's retries; without Redis the API serves degraded.
  await requirePostgres(config.databaseUrl, config.databaseHosts);
  const server = new ApiHttpServer(config);
  // Nothing printed by Nest's console logger, and a start-up error comes back here (abortOnError).
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, server.adapter(), {
    bodyParser: false,
    logger: new PinoNestLogger(rootLogger(config, 'api')),
    abortOnError: false,
  });
  configureApp(app);
  await server.serve(app);
});
