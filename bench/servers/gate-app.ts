// Auth and limiter cost: one trivial route behind the REAL RequestGateMiddleware of the API,
// with its real dependencies (key cache over Postgres, limiter over Redis). The mode (argv[2])
// chooses what sits in front of the route, everything else being the same app:
//   none: nothing; auth: the gate with a limiter that admits without Redis; gate: the real gate.
import 'reflect-metadata';
import { RequestListener } from 'node:http';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AuthModule } from '@app/auth';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { OutboxModule } from '@app/outbox';
import { QueuesModule } from '@app/queues';
import { decide, Limits, PlanRateLimiter, RateLimitDecision } from '@app/rate-limit';
import { RedisModule } from '@app/redis';
import { RequestGateMiddleware } from '../../apps/api/src/gate/request-gate.middleware';
import { createApiServer } from '../../apps/api/src/http-server';
import { FIXED_BODY } from './fixed-body';

const mode = process.argv[2] as 'none' | 'auth' | 'gate';
if (!['none', 'auth', 'gate'].includes(mode)) throw new Error('usage: gate-app.ts none|auth|gate');

@Controller()
class TrivialController {
  @Get('v1/bench/fixed')
  fixed(): object {
    return FIXED_BODY;
  }

  @Get('ready')
  ready(): string {
    return 'ok';
  }
}

/** Admits everything without Redis but still builds the decision and its headers, as the real one does. */
const admitAll = {
  consume: (_subject: unknown, limits: Limits, nowMs: number): Promise<RateLimitDecision> =>
    Promise.resolve(decide({ outcome: 0, minuteCount: 1, dayCount: 1, ms: 0 }, limits, nowMs, false)),
};

@Module({
  imports: [ConfigModule, DatabaseModule, RedisModule, QueuesModule.register('producer'), OutboxModule, AuthModule],
  controllers: [TrivialController],
  providers: [
    mode === 'auth' ? { provide: PlanRateLimiter, useValue: admitAll } : PlanRateLimiter,
    RequestGateMiddleware,
  ],
})
class GateBenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(GateBenchModule, {
    logger: ['error'],
    bodyParser: false,
  });
  if (mode !== 'none') {
    const gate = app.get(RequestGateMiddleware);
    app.use(
      (
        req: Parameters<RequestGateMiddleware['use']>[0],
        res: Parameters<RequestGateMiddleware['use']>[1],
        next: () => void,
      ) => (req.path === '/ready' ? next() : gate.use(req, res, next)),
    );
  }
  app.enableShutdownHooks();
  await app.init();
  // The API's own server (request classes with a stable shape), as in production.
  createApiServer(app.getHttpAdapter().getInstance() as RequestListener).listen(Number(process.env.PORT));
}

void main();
