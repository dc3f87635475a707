import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { RedisOptions as QueueRedisOptions } from 'bullmq';
import { Cluster, RedisOptions } from 'ioredis';
import { AppConfig } from '@app/config';
import { within } from './within';
import { connectRedis, redisOptions, watchErrors } from '@app/redis';
import { JobQueues } from './job-queues';

const QUIT_WAIT_MS = 1_000;

/** Options (one node: a connection per queue) or a shared cluster client. */
export const QUEUE_CONNECTION = Symbol('QUEUE_CONNECTION');
export type QueueConnection = QueueRedisOptions | Cluster;

// A producer (the API) fails fast while Redis is away, as BullMQ advises: the outbox keeps the job, so a request
// never hangs on Redis. A worker waits for Redis to return (workers must block, not fail).
function queueConnection(config: AppConfig, role: 'producer' | 'worker'): QueueConnection {
  const options = {
    maxRetriesPerRequest: role === 'worker' ? null : 1,
    enableOfflineQueue: role === 'worker',
    // The completions of a batch's jobs come in one tick: one write to Redis for them, not one each.
    enableAutoPipelining: role === 'worker',
  } satisfies RedisOptions;
  if (!config.redisCluster) return { ...redisOptions(config.redisUrl), ...options };
  // BullMQ builds only single-node clients from options; it shares a cluster client but never closes it.
  const cluster = connectRedis(config, options) as Cluster;
  watchErrors(cluster, 'petstore-queues');
  return cluster;
}

@Injectable()
export class SharedQueueConnection implements OnApplicationShutdown {
  constructor(
    @Inject(QUEUE_CONNECTION) private readonly connection: QueueConnection,
    private readonly queues: JobQueues,
  ) {}

  /** After the queues (close() is idempotent: @nestjs/bullmq's own call gets the same promise). */
  async onApplicationShutdown(): Promise<void> {
    if (!(this.connection instanceof Cluster)) return;
    await Promise.allSettled(this.queues.all().map((queue) => queue.close()));
    // Bounded: a node left half-failed-over may never answer QUIT, and shutdown must end.
    if (this.connection.status === 'ready') await within(this.connection.quit(), QUIT_WAIT_MS).catch(() => undefined);
    this.connection.disconnect();
  }
}

@Module({})
export class QueueConnectionModule {
  static register(role: 'producer' | 'worker'): DynamicModule {
    return {
      module: QueueConnectionModule,
      providers: [
        { provide: QUEUE_CONNECTION, inject: [AppConfig], useFactory: (c: AppConfig) => queueConnection(c, role) },
      ],
      exports: [QUEUE_CONNECTION],
    };
  }
}
