import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { infoOfEachMaster, REDIS, RedisClient } from '@app/redis';

/**
 * Above this share of Redis's maxmemory no job is pushed into Redis: they wait in the outbox
 * (Postgres) until the workers have drained Redis below it. At the ceiling itself (noeviction)
 * a worker cannot even take a job (that is a write), so a Redis filled to maxmemory by
 * producers would stop every worker for good; the headroom keeps them draining.
 */
const REDIS_HIGH_WATER = 0.8;
/**
 * How often the mark is checked. A producer can push a few MB a second: checked once a second,
 * an API overshot a small Redis from 80% to 99% between two checks and the workers stalled
 * (test/faults/redis-ceiling.fault-spec.ts); ten `INFO memory` a second keep the overshoot to a few %.
 */
const REDIS_MEMORY_CHECK_MS = 100;

/** Whether Redis is too full to take new jobs, as of its last `INFO memory`. */
@Injectable()
export class RedisMemoryWatch implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(RedisMemoryWatch.name);
  private timer?: NodeJS.Timeout;
  /** Redis is above REDIS_HIGH_WATER of its maxmemory (checked every REDIS_MEMORY_CHECK_MS). */
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

  /**
   * One `INFO memory` per check (per master on a cluster: any one full stops new jobs, since
   * the queues share no slot): cheaper than asking on every dispatch. Keeps the last answer
   * while Redis is away.
   */
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
