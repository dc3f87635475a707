import { Logger } from '@nestjs/common';
import { Counter } from 'prom-client';
// Either client; named here, not from redis.ts, which imports this file.
import type { Cluster, Redis } from 'ioredis';

/** The metric's `kind` label, in words an operator can act on. */
export type RedisErrorKind = 'connection' | 'crossslot' | 'redirection' | 'cluster_down' | 'other';

const errors = new Counter({
  name: 'petstore_redis_errors_total',
  help: 'Errors a Redis client reported, by client and kind (crossslot, redirection and cluster_down: the cluster is misconfigured or failing over)',
  labelNames: ['client', 'kind'] as const,
});

export function redisErrorKind(err: Error): RedisErrorKind {
  const message = err.message ?? '';
  if (message.startsWith('CROSSSLOT')) return 'crossslot';
  if (/^(MOVED|ASK)\b|Too many Cluster redirections/.test(message)) return 'redirection';
  if (/^CLUSTERDOWN\b|Failed to refresh slots cache|None of startup nodes is available/.test(message))
    return 'cluster_down';
  if (/ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Connection is closed|Command timed out/.test(message))
    return 'connection';
  return 'other';
}

/** A failed command, which the client itself never emits. */
export function countRedisError(client: string, err: Error): RedisErrorKind {
  const kind = redisErrorKind(err);
  errors.inc({ client, kind });
  return kind;
}

// Without a listener, ioredis prints every error with its stack. Logged once per distinct
// message until ready again: an outage fails every retry alike.
export function watchErrors(client: Redis | Cluster, name: string): void {
  const logger = new Logger('Redis');
  let last: string | undefined;
  client.on('error', (err: Error) => {
    const kind = countRedisError(name, err);
    if (err.message !== last) logger.warn({ kind }, `${name}: ${err.message}`);
    last = err.message;
  });
  // A cluster reports its nodes' connection errors apart from its own.
  client.on('node error', (err: Error) => {
    const kind = countRedisError(name, err);
    if (err.message !== last) logger.warn({ kind }, `${name}: a cluster node: ${err.message}`);
    last = err.message;
  });
  client.on('ready', () => (last = undefined));
}
