import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { AppConfig } from '@app/config';
import { redisOptions, type RedisClient } from './redis';
import { REDIS, REDIS_SUBSCRIBER } from './redis-tokens';

export interface BroadcastListener {
  onMessage(message: string): void;
  onListening(): void;
  /** Messages may be missed until onListening. */
  onDeaf(): void;
}

const PROBE = '\u0000probe:';
const PROBE_TIMEOUT_MS = 1_000;

// At most once, to whoever is subscribed. A cluster uses sharded pub/sub: a message costs its
// slot's shard alone instead of crossing every node's bus, and ioredis follows failovers.
// Channels are named by the caller and live in the deployment's namespace (see channel()).
@Injectable()
export class RedisBroadcast {
  private readonly probes = new Map<string, () => void>();
  private readonly listeners = new Map<string, BroadcastListener>();
  private readonly listening = new Set<string>();
  private readonly scope: string;

  constructor(
    @Inject(REDIS) private readonly publisher: RedisClient,
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: RedisClient,
    config: AppConfig,
  ) {
    // Pub/sub ignores the db index: deployments on one server in two dbs must not hear each other.
    this.scope = config.redisCluster
      ? config.redisNamespace
      : `${config.redisNamespace}:db${redisOptions(config.redisUrl).db}`;
  }

  /** The channel Redis sees for `name`. */
  private channel(name: string): string {
    return `${this.scope}:${name}`;
  }

  private get sharded(): boolean {
    return this.subscriber instanceof Cluster;
  }

  async publish(name: string, message: string): Promise<void> {
    const channel = this.channel(name);
    if (this.sharded) await this.publisher.spublish(channel, message);
    else await this.publisher.publish(channel, message);
  }

  /** On every (re)connect: the fail-fast client does not queue commands while offline. */
  listen(name: string, listener: BroadcastListener): void {
    const channel = this.channel(name);
    this.listeners.set(channel, listener);
    const heard = () => {
      this.listening.add(channel);
      listener.onListening();
    };
    const deaf = () => {
      this.listening.delete(channel);
      listener.onDeaf();
    };
    const subscribe = () =>
      (this.sharded ? this.subscriber.ssubscribe(channel) : this.subscriber.subscribe(channel)).then(heard, deaf);
    this.subscriber.on('ready', subscribe);
    if (this.subscriber.status === 'ready') void subscribe();
    // A cluster losing a node may have lost the shard's subscription with it; ioredis subscribes
    // again on the new topology, and the next probe that comes back says so.
    for (const event of ['close', 'end', 'reconnecting', '-node']) this.subscriber.on(event, deaf);
    this.subscriber.on(this.sharded ? 'smessage' : 'message', (from: string, message: string) => {
      if (from !== channel) return;
      if (!message.startsWith(PROBE)) return listener.onMessage(message);
      this.probes.get(message)?.();
    });
  }

  // A connection can die without closing (a silent partition). One node: a PING on the subscriber;
  // a cluster spreads subscriptions over shards, so the probe is a message to ourselves.
  async probe(name: string): Promise<void> {
    const channel = this.channel(name);
    try {
      if (!this.sharded) {
        // Not subscribed: the next 'ready' subscribes; a PING would prove nothing.
        if (this.listening.has(channel)) await this.subscriber.ping();
        return;
      }
      const token = `${PROBE}${randomUUID()}`;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('probe not heard back within 1 s')), PROBE_TIMEOUT_MS);
        timer.unref();
        this.probes.set(token, () => {
          clearTimeout(timer);
          resolve();
        });
        this.publisher.spublish(channel, token).catch(reject);
      }).finally(() => this.probes.delete(token));
      if (!this.listening.has(channel)) {
        this.listening.add(channel);
        this.listeners.get(channel)?.onListening();
      }
    } catch (err) {
      if (this.listening.delete(channel)) this.listeners.get(channel)?.onDeaf();
      // A node connection reconnects and subscribes on 'ready'; a cluster asks the channel's shard again.
      if (this.sharded) void this.subscriber.ssubscribe(channel).catch(() => undefined);
      else this.subscriber.disconnect(true);
      throw err;
    }
  }
}
