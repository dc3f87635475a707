import { Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { createFailFastClient, RedisClient } from './redis';
import { LeasedSlots } from './leased-slots';
import { RedisBroadcast } from './redis-broadcast';
import { REDIS, REDIS_SUBSCRIBER } from './redis-tokens';

@Injectable()
class RedisLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly client: RedisClient,
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: RedisClient,
  ) {}

  onApplicationShutdown(): void {
    this.client.disconnect();
    this.subscriber.disconnect();
  }
}

@Global()
@Module({
  providers: [
    { provide: REDIS, inject: [AppConfig], useFactory: (c: AppConfig) => createFailFastClient(c, 'petstore') },
    {
      provide: REDIS_SUBSCRIBER,
      inject: [AppConfig],
      // On a cluster, one subscriber connection per shard that holds a subscribed channel.
      useFactory: (c: AppConfig) => createFailFastClient(c, 'petstore-sub', { shardedSubscribers: true }),
    },
    RedisLifecycle,
    RedisBroadcast,
    LeasedSlots,
  ],
  exports: [REDIS, REDIS_SUBSCRIBER, RedisBroadcast, LeasedSlots],
})
export class RedisModule {}
