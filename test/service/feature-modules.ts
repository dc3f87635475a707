import { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AccessModule } from '@app/access';
import { Clock, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { EventsModule } from '@app/events';
import { FEATURE_WORKERS } from '@app/features';
import { JobsModule } from '@app/jobs';
import { RedisModule } from '@app/redis';
import { TransactionsModule } from '@app/transactions';

/**
 * The service tier: feature modules on the platform (real Postgres and Redis from the test
 * environment), as both apps assemble them, with no HTTP and no worker runtime.
 */
export function featureModules(...features: (Type | DynamicModule)[]): Promise<INestApplicationContext> {
  return featureModulesAt(new Clock(), ...features);
}

/** The same, with `clock` as every service's time (a TestClock lets a test choose the instant). */
export async function featureModulesAt(
  clock: Clock,
  ...features: (Type | DynamicModule)[]
): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ConfigModule,
      DatabaseModule.forRoot('api'),
      RedisModule,
      JobsModule.register('producer', FEATURE_WORKERS),
      EventsModule,
      TransactionsModule,
      AccessModule,
      ...features,
    ],
  })
    .overrideProvider(Clock)
    .useValue(clock)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}
