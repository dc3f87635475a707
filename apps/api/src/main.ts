import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppConfig } from '@app/config';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { serve } from './http-server';

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
