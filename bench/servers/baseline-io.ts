// Baseline C: bare NestJS (Express) making the hot routes' own I/O and nothing else, on the same
// @nestjs/*, pg, ioredis and bullmq: the limit of our design (docs/internals/benchmarks.md). The I/O is
// bench/servers/same-io.ts, shared with the node:http floor and bare Nest on Fastify.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { SameIoModule } from './same-io-nest';

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(SameIoModule, { logger: ['error'] });
  app.enableShutdownHooks();
  const server = await app.listen(Number(process.env.PORT));
  server.keepAliveTimeout = 5_000;
}

void main();
