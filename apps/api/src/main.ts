import { setFlagsFromString } from 'node:v8';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { loadConfig } from '@app/config';
import { initTracing, PinoNestLogger, requirePostgres, rootLogger, startOrExit } from '@app/observability';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { serve } from './http-server';

// A full GC before the old generation grows 2.5x bounds the API's RSS at no throughput cost
// (docs/internals/decisions.md). V8 reads this flag at each full GC.
setFlagsFromString('--heap-growing-percent=150');

startOrExit('api', async () => {
  const config = loadConfig();
  initTracing(config, 'api');
  // Checked before Nest starts, so an unreachable Postgres is one line, not TypeORM's retries.
  // Redis is not: the API starts and serves degraded without it.
  await requirePostgres(config.databaseUrl);
  // The process's logger from the first line on: nothing buffered, nothing printed by Nest's
  // own console logger, and an error inside Nest's start-up comes back here (abortOnError).
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    logger: new PinoNestLogger(rootLogger(config, 'api')),
    abortOnError: false,
  });
  configureApp(app);
  await serve(app, config);
});
