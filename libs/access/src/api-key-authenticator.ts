import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery } from '@app/database';
import { RedisBroadcast } from '@app/redis';
import { AUTH_INVALIDATION_CHANNEL, AuthContext, AuthInvalidation, isUsable } from './auth-context';
import { apiKeyQueries } from './access.queries';
import { displayPrefix, hashApiKey, hasValidTag, KeyTags, keyFormat } from './api-key-format';
import { KeyCache } from './key-cache';
import { LegacyKeyPrefixes } from './legacy-key-prefixes';
import { LookupBudget, LookupDeclined, LookupRequester } from './lookup-budget';
import { SharedKeyMemory } from './shared-key-memory';

interface CacheEntry {
  accountId: number;
  ctx: AuthContext;
  loadedAt: number;
  hash: string;
}

const lookups = new Counter({
  name: 'petstore_api_key_lookups_total',
  help: 'Keys this process holds no answer for, by where the answer came from (shape: refused with no I/O)',
  labelNames: ['answer'] as const,
});

const MAX_ENTRIES = 50_000;
const MAX_ENTRIES_PER_ACCOUNT = 1_000;
// Genuine-looking keys that matched no live key, remembered briefly apart from verified ones.
const MAX_UNKNOWN = 10_000;
const NEGATIVE_TTL_MS = 5_000;
const UNSUBSCRIBED_TTL_MS = 1_000;
const LAST_USED_FLUSH_MS = 5_000;
const SUBSCRIPTION_PROBE_MS = 1_000;

/**
 * Verifies Bearer keys, cheapest answer first: this process's cache; the key's shape (checksum,
 * tag, legacy prefix) with no I/O; the answers shared in Redis (refused keys too); then Postgres,
 * single-flight, within the lookup budget and the client address's share of it. Invalidations
 * arrive over pub/sub; an entry loaded while deaf to them is trusted for 1 s only. A heap snapshot
 * holds keys in use (docs/keys-and-limits.md).
 */
@Injectable()
export class ApiKeyAuthenticator implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ApiKeyAuthenticator.name);
  private readonly cache = new KeyCache<CacheEntry>(MAX_ENTRIES, MAX_ENTRIES_PER_ACCOUNT);
  private readonly unknown = new Map<string, number>();
  private readonly inflight = new Map<string, Promise<AuthContext | null>>();
  private readonly lastUsed = new Map<number, number>();
  private readonly budget: LookupBudget;
  private flushTimer?: NodeJS.Timeout;
  private probeTimer?: NodeJS.Timeout;
  private probing = false;
  private listeningSince?: number;
  // Bumped by every invalidation: a load that raced one is not cached.
  private epoch = 0;
  private readonly watchers = new Set<(msg: AuthInvalidation) => void>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly broadcast: RedisBroadcast,
    private readonly shared: SharedKeyMemory,
    private readonly legacy: LegacyKeyPrefixes,
    private readonly tags: KeyTags,
  ) {
    this.budget = new LookupBudget(config.authLookup.concurrency, config.authLookup.ratePerSecond);
  }

  async onModuleInit(): Promise<void> {
    // Entries loaded after the subscription is acknowledged cannot have missed a message (the
    // publish follows the commit, which follows their read).
    this.broadcast.listen(AUTH_INVALIDATION_CHANNEL, {
      onListening: () => (this.listeningSince ??= Date.now()),
      onDeaf: () => (this.listeningSince = undefined),
      onMessage: (message) => {
        try {
          this.invalidate(JSON.parse(message) as AuthInvalidation);
        } catch {
          this.cache.clear(); // unreadable: forget everything rather than keep something stale
        }
      },
    });
    this.flushTimer = setInterval(() => {
      this.dropStale();
      void this.flushLastUsed();
    }, LAST_USED_FLUSH_MS);
    this.flushTimer.unref();
    this.probeTimer = setInterval(() => this.checkSubscription(), SUBSCRIPTION_PROBE_MS);
    this.probeTimer.unref();
    await this.legacy.start();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.probeTimer);
    this.legacy.stop();
    await this.flushLastUsed();
  }

  async authenticate(token: string, nowMs = Date.now()): Promise<AuthContext | null> {
    const cached = this.cached(token, nowMs);
    return cached !== undefined ? cached : this.lookUp(token, nowMs);
  }

  /** Without I/O (the hot path); undefined when this process holds no answer. */
  cached(token: string, nowMs = Date.now()): AuthContext | null | undefined {
    const entry = this.cache.get(token);
    if (!entry || !this.isFresh(entry)) return undefined;
    return this.usable(entry.ctx, nowMs);
  }

  /** From the shape alone: a genuine key is judged by its account, anything else by its address. */
  isPlausible(token: string): boolean {
    const format = keyFormat(token);
    if (format === 'tagged') return hasValidTag(token, this.tags);
    return format === 'legacy' && this.legacy.mayExist(displayPrefix(token));
  }

  /** Rejects with LookupDeclined when Postgres alone can answer and `requester`'s limited address had its lookup. */
  lookUp(token: string, nowMs = Date.now(), requester?: LookupRequester): Promise<AuthContext | null> {
    if (!this.isPlausible(token)) {
      lookups.inc({ answer: 'shape' });
      return Promise.resolve(null);
    }
    const hash = hashApiKey(token);
    const refusedAt = this.unknown.get(hash);
    if (refusedAt !== undefined && Date.now() - refusedAt < NEGATIVE_TTL_MS) return Promise.resolve(null);
    let pending = this.inflight.get(hash);
    if (!pending) {
      pending = this.load(token, hash, requester).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, pending);
    }
    return pending.then((ctx) => (ctx ? this.usable(ctx, nowMs) : null));
  }

  private async load(token: string, hash: string, requester?: LookupRequester): Promise<AuthContext | null> {
    const epoch = this.epoch;
    const loadedAt = Date.now();
    // Deaf to invalidations means trouble with Redis: Postgres alone rather than wait on it.
    const listening = this.listeningSince !== undefined;
    const remembered = listening ? await this.shared.get(hash) : undefined;
    let ctx: AuthContext | null;
    if (remembered !== undefined) {
      lookups.inc({ answer: 'shared' });
      ctx = remembered;
    } else {
      ctx = await this.fromPostgres(hash, requester, listening);
    }
    if (epoch === this.epoch) {
      if (ctx) this.cache.set(token, { accountId: ctx.accountId, loadedAt, ctx, hash });
      else remember(this.unknown, MAX_UNKNOWN, hash, loadedAt);
      if (remembered === undefined && listening) await this.shared.put(hash, ctx);
    }
    return ctx;
  }

  private async fromPostgres(
    hash: string,
    requester: LookupRequester | undefined,
    listening: boolean,
  ): Promise<AuthContext | null> {
    // The address limiter lives in Redis too: while deaf, only the address's share applies.
    const limited = requester && listening ? await requester.isLimited() : false;
    const release = this.acquireLookup(requester?.address, limited);
    lookups.inc({ answer: 'postgres' });
    try {
      return await this.query(hash);
    } finally {
      release();
    }
  }

  private acquireLookup(address: string | undefined, limited: boolean): () => void {
    try {
      return this.budget.acquire(address, limited);
    } catch (err) {
      lookups.inc({ answer: err instanceof LookupDeclined ? 'address_limited' : 'over_budget' });
      throw err;
    }
  }

  // Outside the lookup budget: issuing keys is rare and already costs Postgres.
  async prime(token: string): Promise<void> {
    try {
      const hash = hashApiKey(token);
      const ctx = await this.query(hash);
      this.unknown.delete(hash);
      // Replaces whatever was remembered for the hash, a "no such key" included.
      if (ctx) await this.shared.put(hash, ctx);
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'new key not shared');
    }
  }

  private usable(ctx: AuthContext, nowMs: number): AuthContext | null {
    if (!isUsable(ctx, nowMs)) return null;
    this.lastUsed.set(ctx.keyId, nowMs);
    return ctx;
  }

  /** `watcher` hears every invalidation this process applies, its own and other replicas'; returns the unwatch. */
  watch(watcher: (msg: AuthInvalidation) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** The key as Postgres has it now, usable or not (null: no key has this hash); outside the lookup budget. */
  current(hash: string): Promise<AuthContext | null> {
    return this.query(hash);
  }

  invalidate(msg: AuthInvalidation): void {
    this.epoch++;
    for (const watcher of this.watchers) watcher(msg);
    if (msg.keyHash !== undefined) this.unknown.delete(msg.keyHash);
    this.cache.deleteWhere(
      (entry) => entry.hash === msg.keyHash || (msg.accountId !== undefined && entry.accountId === msg.accountId),
    );
    void this.legacy.reload();
  }

  // A connection can die without closing (silent partition) and no invalidation arrives: a probe
  // each second proves the subscription alive; a failed one stops trusting the cache at once.
  private checkSubscription(): void {
    if (this.probing) return;
    this.probing = true;
    const wasListening = this.listeningSince !== undefined;
    this.broadcast.probe(AUTH_INVALIDATION_CHANNEL).then(
      () => (this.probing = false),
      (err: Error) => {
        this.probing = false;
        // Once per loss: a Redis that stays away fails every probe alike.
        if (wasListening)
          this.logger.warn({ err: { message: err.message } }, 'auth invalidation connection silent: reconnecting');
      },
    );
  }

  private dropStale(): void {
    this.cache.deleteWhere((entry) => !this.isFresh(entry));
    const now = Date.now();
    for (const [hash, refusedAt] of this.unknown) if (now - refusedAt >= NEGATIVE_TTL_MS) this.unknown.delete(hash);
  }

  private isFresh(entry: CacheEntry): boolean {
    const age = Date.now() - entry.loadedAt;
    const heard = this.listeningSince !== undefined && entry.loadedAt >= this.listeningSince;
    return age < (heard ? this.config.authCacheTtlMs : UNSUBSCRIBED_TTL_MS);
  }

  private async query(hash: string): Promise<AuthContext | null> {
    const rows = await preparedQuery<AuthContext>(this.dataSource, apiKeyQueries.authContext(hash));
    return rows[0] ?? null;
  }

  private async flushLastUsed(): Promise<void> {
    if (!this.lastUsed.size) return;
    const batch = [...this.lastUsed];
    this.lastUsed.clear();
    try {
      await preparedQuery(
        this.dataSource,
        apiKeyQueries.touchLastUsed(
          batch.map(([id]) => id),
          batch.map(([, t]) => new Date(t).toISOString()),
        ),
      );
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'last_used_at flush failed');
    }
  }
}

function remember<K, V>(map: Map<K, V>, max: number, key: K, value: V): void {
  if (!map.has(key) && map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
