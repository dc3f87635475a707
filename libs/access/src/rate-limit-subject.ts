import type { RedisClient } from '@app/redis';

export interface RateLimitSubject {
  /** `a:<accountId>` or `ip:<address>`: the Redis Cluster hash tag. */
  bucket: string;
  banKey: string;
  plan: string;
  /** Unset for client addresses (no usage history). */
  keyId?: number;
}

export function keySubject(accountId: number, keyId: number, plan: string): RateLimitSubject {
  return { bucket: `a:${accountId}`, banKey: `k${keyId}`, plan, keyId };
}

/** `namespace`: the deployment's (AppConfig.redisNamespace), before the hash tag. */
export const bucketTag = (namespace: string, bucket: string) => `${namespace}:rl:{${bucket}}`;

export const banFlagKey = (namespace: string, subject: Pick<RateLimitSubject, 'bucket' | 'banKey'>) =>
  `${bucketTag(namespace, subject.bucket)}:ban:${subject.banKey}`;

const HAND_OVER_BAN_LUA = `
local left = redis.call('PTTL', KEYS[1])
if left <= 0 then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', left)
return left
`;

// Without it a sibling key could rotate a banned key and the new secret would work at once.
// Both keys share the account's hash tag (one Cluster slot).
export async function handOverBan(
  redis: RedisClient,
  namespace: string,
  accountId: number,
  fromKeyId: number,
  toKeyId: number,
): Promise<number> {
  const from = banFlagKey(namespace, keySubject(accountId, fromKeyId, ''));
  const to = banFlagKey(namespace, keySubject(accountId, toKeyId, ''));
  return (await redis.eval(HAND_OVER_BAN_LUA, 2, from, to)) as number;
}
