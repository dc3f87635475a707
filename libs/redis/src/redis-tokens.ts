export const REDIS = Symbol('REDIS');
/** Holds the pub/sub subscriptions (see RedisBroadcast). */
export const REDIS_SUBSCRIBER = Symbol('REDIS_SUBSCRIBER');
