// The REAL RequestGateMiddleware in front of a trivial route; argv[2]: none, auth (identify()
// alone: no limiter, no rate-limit headers) or gate (the whole gate).
import 'reflect-metadata';
import { RequestListener } from 'node:http';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AccessModule, PlanRateLimiter } from '@app/access';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { EventsModule } from '@app/events';
import { JobsModule } from '@app/jobs';
import { RedisModule } from '@app/redis';
import { TransactionsModule } from '@app/transactions';
import { RequestGateMiddleware } from '../../apps/api/src/gate/request-gate.middleware';
import { RouteTable, UNROUTED } from '../../apps/api/src/policy/route-table';
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

@Module({
  imports: [
    ConfigModule,
    DatabaseModule.forRoot('api'),
    RedisModule,
    JobsModule.register('producer'),
    EventsModule,
    TransactionsModule,
    AccessModule,
  ],
  controllers: [TrivialController],
  providers: [
    PlanRateLimiter,
    RequestGateMiddleware,
    // As the API's table would hold it: a read, on the account's budget.
    {
      provide: RouteTable,
      useValue: new RouteTable([
        { method: 'GET', path: '/v1/bench/fixed', operationId: 'fixed', policy: { ...UNROUTED, scope: 'read' } },
      ]),
    },
  ],
})
class GateBenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(GateBenchModule, {
    logger: ['error'],
    bodyParser: false,
  });
  const gate = app.get(RequestGateMiddleware);
  type Req = Parameters<RequestGateMiddleware['use']>[0];
  type Res = Parameters<RequestGateMiddleware['use']>[1];
  const authOnly = (req: Req, res: Res, next: (err?: unknown) => void) =>
    gate.identify(req.headers.authorization, Date.now()).then(({ auth, failure }) => {
      res.locals.auth = auth;
      next(failure);
    }, next);
  const front = { auth: authOnly, gate: gate.use.bind(gate) }[mode as 'auth' | 'gate'];
  if (front)
    app.use((req: Req, res: Res, next: () => void) => (req.path === '/ready' ? next() : front(req, res, next)));
  app.enableShutdownHooks();
  await app.init();
  // As in production.
  createApiServer(app.getHttpAdapter().getInstance() as RequestListener).listen(Number(process.env.PORT));
}

void main();
