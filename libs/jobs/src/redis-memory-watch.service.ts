import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { infoOfEachMaster, REDIS, RedisClient } from '@app/redis';

// Above it new jobs wait in the outbox: at maxmemory itself (noeviction) a worker cannot even take a job (a write),
// so producers could stop every worker for good; the headroom keeps them draining.
const REDIS_HIGH_WATER = 0.8;
/** A producer can push a few MB a second: ten checks a second keep its overshoot to a few %. */
const REDIS_MEMORY_CHECK_MS = 100;

@Injectable()
export class RedisMemoryWatch implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(RedisMemoryWatch.name);
  private timer?: NodeJS.Timeout;
  full = false;

  /** The fail-fast command client (1 s timeout): a memory check never waits for Redis to return. */
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  onModuleInit(): void {
    // One check at a time: while Redis is away the client's promise may wait for it.
    let checking: Promise<void> | undefined;
    this.timer = setInterval(() => {
      checking ??= this.check().finally(() => (checking = undefined));
    }, REDIS_MEMORY_CHECK_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Per master on a cluster: any one full stops new jobs, since the queues share no slot. */
  async check(): Promise<void> {
    try {
      if (this.redis.status !== 'ready') return;
      const masters = (await infoOfEachMaster(this.redis, 'memory')).map((info) => {
        const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
        return { usedMemory: field('used_memory'), maxmemory: field('maxmemory') };
      });
      const fullest = masters.find((m) => m.maxmemory > 0 && m.usedMemory > m.maxmemory * REDIS_HIGH_WATER);
      const full = fullest !== undefined;
      if (full !== this.full) {
        this.logger.warn(
          fullest ?? masters[0],
          full ? 'Redis near maxmemory: new jobs wait in the outbox' : 'Redis below its high-water mark again',
        );
      }
      this.full = full;
    } catch {
      // Redis away: dispatch and relay find out for themselves.
    }
  }
}
