/** The shared command client (fail-fast) of the process. */
export const REDIS = Symbol('REDIS');
/** The connection(s) that hold pub/sub subscriptions (see RedisBroadcast). */
export const REDIS_SUBSCRIBER = Symbol('REDIS_SUBSCRIBER');
