import { Logger } from '@nestjs/common';
import Redis, { RedisOptions } from 'ioredis';

/** Connection options from REDIS_URL (db index in the path, password in the userinfo). */
export function redisOptions(url: string): RedisOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    // Reconnect for ever with a capped delay: Redis coming back must need no restart.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  };
}

/**
 * A client for request-path commands: fails fast instead of queueing while Redis is down,
 * so callers can fall back (limiter) or degrade (cache) within a bounded time.
 */
export function createFailFastClient(url: string, name: string): Redis {
  const client = new Redis({
    ...redisOptions(url),
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    // Commands issued in the same event-loop tick (concurrent requests' idempotency claims, for
    // one) leave in one write: each socket write is a system call and a wake-up of Redis.
    enableAutoPipelining: true,
  });
  // Without a listener, ioredis prints every error with its stack to stderr. One warning per
  // distinct error until the connection is ready again: an outage fails every retry alike.
  const logger = new Logger('Redis');
  let last: string | undefined;
  client.on('error', (err: Error) => {
    if (err.message !== last) logger.warn(`${name}: ${err.message}`);
    last = err.message;
  });
  client.on('ready', () => (last = undefined));
  return client;
}
