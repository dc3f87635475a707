import { Inject, Injectable } from '@nestjs/common';
import { Result } from 'ioredis';
import { REDIS, RedisClient } from '@app/redis';

const TAKE_COMMAND = 'petstoreStreamSlot';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** 1 if the slot is taken (or renewed), 0 if the key has `cap` streams open already. */
    [TAKE_COMMAND](key: string, now: number, expiresAt: number, member: string, cap: number): Result<number, Context>;
  }
}

// Streams scored by when their lease lapses: a replica killed with streams open cannot hold slots for ever.
const TAKE_LUA = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1`;

const slotsKey = (keyId: number) => `petstore:event-streams:${keyId}`;

/** The open streams of each API key, counted across replicas; a lease is renewed at each heartbeat. */
@Injectable()
export class StreamSlots {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {
    if (!this.redis[TAKE_COMMAND]) this.redis.defineCommand(TAKE_COMMAND, { numberOfKeys: 1, lua: TAKE_LUA });
  }

  async take(keyId: number, streamId: string, cap: number, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    return (await this.redis[TAKE_COMMAND](slotsKey(keyId), now, now + leaseMs, streamId, cap)) === 1;
  }

  async release(keyId: number, streamId: string): Promise<void> {
    await this.redis.zrem(slotsKey(keyId), streamId);
  }
}
