import { Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '@app/config';
import { createFailFastClient } from './redis';

export const REDIS = Symbol('REDIS');
export const REDIS_SUBSCRIBER = Symbol('REDIS_SUBSCRIBER');

@Injectable()
class RedisLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly client: Redis,
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: Redis,
  ) {}

  onApplicationShutdown(): void {
    this.client.disconnect();
    this.subscriber.disconnect();
  }
}

/** The shared command client and a pub/sub subscriber connection. */
@Global()
@Module({
  providers: [
    { provide: REDIS, inject: [AppConfig], useFactory: (c: AppConfig) => createFailFastClient(c.redisUrl, 'petstore') },
    {
      provide: REDIS_SUBSCRIBER,
      inject: [AppConfig],
      useFactory: (c: AppConfig) => createFailFastClient(c.redisUrl, 'petstore-sub'),
    },
    RedisLifecycle,
  ],
  exports: [REDIS, REDIS_SUBSCRIBER],
})
export class RedisModule {}
