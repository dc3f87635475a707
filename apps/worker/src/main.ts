import { NestFactory } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { PinoNestLogger, rootLogger } from '@app/observability';
import { WorkerModule } from './worker.module';

/** An application context, not an HTTP app: processors and the relay, stopped cleanly on SIGTERM. */
async function bootstrap(): Promise<void> {
  const app = await NestFactory.createApplicationContext(WorkerModule, { bufferLogs: true });
  app.useLogger(new PinoNestLogger(rootLogger(app.get(AppConfig), 'worker')));
  // Nest closes the BullMQ workers on shutdown: active jobs finish, the rest stay queued.
  app.enableShutdownHooks();
  await app.init();
}

bootstrap().catch((err: Error) => {
  process.stderr.write(`worker failed to start: ${err.message}\n`);
  process.exit(1);
});
