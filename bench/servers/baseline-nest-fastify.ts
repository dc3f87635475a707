// Bare NestJS on Fastify (@nestjs/platform-fastify) making the hot routes' own I/O and nothing else: baseline C's
// controller and I/O (same-io-nest.ts, same-io.ts) on Nest's other platform adapter (docs/internals/benchmarks.md).
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SameIoModule } from './same-io-nest';

async function main(): Promise<void> {
  // Node's keep-alive timeout, as the other servers keep it (Fastify's own default is 72 s).
  const adapter = new FastifyAdapter({ keepAliveTimeout: 5_000 });
  const app = await NestFactory.create<NestFastifyApplication>(SameIoModule, adapter, { logger: ['error'] });
  app.enableShutdownHooks();
  // Fastify binds to localhost alone by default, which may be ::1; the bench asks 127.0.0.1.
  await app.listen(Number(process.env.PORT), '127.0.0.1');
}

void main();
