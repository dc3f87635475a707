import type { RedisClient } from '@app/redis';

/** Whose budget a request spends: an account (keyed per API key for bans) or a client address. */
export interface RateLimitSubject {
  /** `a:<accountId>` or `ip:<address>`; becomes the Redis Cluster hash tag. */
  bucket: string;
  /** Strikes and bans are per API key (or per address when there is no key). */
  banKey: string;
  plan: string;
  /** The API key whose usage history counts this request (none for client addresses). */
  keyId?: number;
}

/** A key's subject: the account's shared budget, the key's own strikes and ban. */
export function keySubject(accountId: number, keyId: number, plan: string): RateLimitSubject {
  return { bucket: `a:${accountId}`, banKey: `k${keyId}`, plan, keyId };
}

/** Prefix of every Redis key of a bucket; `{...}` is the Cluster hash tag. */
export const bucketTag = (bucket: string) => `rl:{${bucket}}`;

export const banFlagKey = (subject: Pick<RateLimitSubject, 'bucket' | 'banKey'>) =>
  `${bucketTag(subject.bucket)}:ban:${subject.banKey}`;

/** Copies a ban's remaining time from one key to another in one step; returns the ms copied (0: no ban). */
const HAND_OVER_BAN_LUA = `
local left = redis.call('PTTL', KEYS[1])
if left <= 0 then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', left)
return left
`;

/**
 * Rotation hands a banned key's ban to its replacement for the time the ban has left: without
 * it, a sibling key could rotate the banned key and the new secret would work at once.
 * Both keys are of one account, so they share its hash tag (one Cluster slot).
 */
export async function handOverBan(
  redis: RedisClient,
  accountId: number,
  fromKeyId: number,
  toKeyId: number,
): Promise<number> {
  const from = banFlagKey(keySubject(accountId, fromKeyId, ''));
  const to = banFlagKey(keySubject(accountId, toKeyId, ''));
  return (await redis.eval(HAND_OVER_BAN_LUA, 2, from, to)) as number;
}
