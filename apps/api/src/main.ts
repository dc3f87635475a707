import { setFlagsFromString } from 'node:v8';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppConfig } from '@app/config';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { serve } from './http-server';

// Under load nearly everything a request allocates dies young, yet enough survives two
// scavenges that V8 lets the old generation grow to ~4x the live set (~40 MB) before a full
// GC: RSS 230-265 MB at 50 connections. Growing it by 2.5x keeps RSS near 200 MB with no
// throughput change beyond noise; 2x gave 180 MB but ~8% fewer requests/s (interleaved runs,
// docs/benchmarks.md). V8 reads this flag at each full GC.
setFlagsFromString('--heap-growing-percent=150');

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { bodyParser: false, bufferLogs: true });
  configureApp(app);
  await serve(app, app.get(AppConfig));
}

bootstrap().catch((err: Error) => {
  // Config errors name the bad variable; anything else is reported by class and message only.
  process.stderr.write(`api failed to start: ${err.message}\n`);
  process.exit(1);
});
