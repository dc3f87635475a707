import { Inject, Injectable } from '@nestjs/common';
import { Result } from 'ioredis';
import type { RedisClient } from './redis';
import { REDIS } from './redis-tokens';

const TAKE_COMMAND = 'petstoreTakeSlot';
const EVICT_COMMAND = 'petstoreEvictSlots';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    [TAKE_COMMAND](...keysThenArgs: (string | number)[]): Result<number, Context>;
    [EVICT_COMMAND](group: string, from: string): Result<number, Context>;
  }
}

// KEYS: one sorted set per limit, members scored by when their lease lapses (a process killed while holding a slot
// cannot keep it for ever). ARGV: now, lease end, member, then each set's cap. Returns the 1-based index of the
// first set at its cap, or 0 when the member holds (or renewed) a slot in every set.
const TAKE_LUA = `
local now, expiresAt, member = ARGV[1], ARGV[2], ARGV[3]
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if not redis.call('ZSCORE', KEYS[i], member) and redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3 + i]) then return i end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], expiresAt, member)
  redis.call('PEXPIREAT', KEYS[i], expiresAt)
end
return 0`;

// KEYS[1]'s members leave KEYS[2] too, and KEYS[1] goes: one holder's slots freed at once.
const EVICT_LUA = `
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
for i = 1, #members, 500 do
  redis.call('ZREM', KEYS[2], unpack(members, i, math.min(i + 499, #members)))
end
redis.call('DEL', KEYS[1])
return #members`;

/** A slot in each of `sets` (all in one Cluster slot), each with its cap. */
export interface SlotRequest {
  sets: string[];
  caps: number[];
  member: string;
  leaseMs: number;
}

/** Counted slots held on lease across processes: streams per key and account, webhook deliveries per account. */
@Injectable()
export class LeasedSlots {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {
    if (!this.redis[TAKE_COMMAND]) this.redis.defineCommand(TAKE_COMMAND, { lua: TAKE_LUA });
    if (!this.redis[EVICT_COMMAND]) this.redis.defineCommand(EVICT_COMMAND, { numberOfKeys: 2, lua: EVICT_LUA });
  }

  /** Takes or renews; -1 when taken, else the index in `sets` of the first one at its cap. */
  async take({ sets, caps, member, leaseMs }: SlotRequest): Promise<number> {
    const now = Date.now();
    const full = await this.redis[TAKE_COMMAND](sets.length, ...sets, now, now + leaseMs, member, ...caps);
    return full - 1;
  }

  async release(sets: string[], member: string): Promise<void> {
    await Promise.all(sets.map((set) => this.redis.zrem(set, member)));
  }

  /** Every member of `group` leaves `from` as well, and `group` is gone. */
  async evict(group: string, from: string): Promise<void> {
    await this.redis[EVICT_COMMAND](group, from);
  }
}
