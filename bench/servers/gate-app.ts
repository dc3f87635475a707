// The REAL RequestGate hook in front of a trivial route; argv[2]: none, auth (identify()
// alone: no limiter, no rate-limit headers) or gate (the whole gate).
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccessModule, PlanRateLimiter } from '@app/access';
import { AppConfig, Clock, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { EVENTS_WORKER, EventsModule } from '@app/events';
import { JobsModule } from '@app/jobs';
import { RedisModule } from '@app/redis';
import { TransactionsModule } from '@app/transactions';
import { ProxyTrustWatch } from '../../apps/api/src/gate/proxy-trust-watch';
import { REQUEST_GATE_FIELDS, RequestGate } from '../../apps/api/src/gate/request-gate.hook';
import { Policy, PublicGet } from '../../apps/api/src/policy/route-policy.decorator';
import { FIXED_BODY } from './fixed-body';

const mode = process.argv[2] as 'none' | 'auth' | 'gate';
if (!['none', 'auth', 'gate'].includes(mode)) throw new Error('usage: gate-app.ts none|auth|gate');

@Controller()
class TrivialController {
  // As the API's routes declare it: a read, on the account's budget.
  @Get('v1/bench/fixed')
  @Policy({ scope: 'read' })
  fixed(): object {
    return FIXED_BODY;
  }

  @PublicGet('ready')
  ready(): string {
    return 'ok';
  }
}

@Module({
  imports: [
    ConfigModule,
    DatabaseModule.forRoot('api'),
    RedisModule,
    JobsModule.register('producer', [EVENTS_WORKER]),
    EventsModule,
    TransactionsModule,
    AccessModule,
  ],
  controllers: [TrivialController],
  providers: [
    PlanRateLimiter,
    RequestGate,
    { provide: ProxyTrustWatch, inject: [AppConfig, Clock], useFactory: ProxyTrustWatch.of },
  ],
})
class GateBenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(GateBenchModule, new FastifyAdapter(), {
    logger: ['error'],
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  for (const [field, initial] of Object.entries(REQUEST_GATE_FIELDS)) fastify.decorateRequest(field, initial);
  const gate = app.get(RequestGate);
  const authOnly = (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    if (req.routeOptions.config.public) return done();
    gate.identify(req.headers.authorization, Date.now()).then(({ auth, failure }) => {
      req.auth = auth ?? null;
      done(failure as Error | undefined);
    }, done);
  };
  const front = { auth: authOnly, gate: gate.onRequest }[mode as 'auth' | 'gate'];
  if (front) fastify.addHook('onRequest', front);
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT), '127.0.0.1');
}

void main();
