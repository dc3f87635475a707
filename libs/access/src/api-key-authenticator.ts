import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { RedisBroadcast } from '@app/redis';
import { AUTH_INVALIDATION_CHANNEL, AuthContext, AuthInvalidation, isUsable } from './auth-context';
import { hashApiKey, isWellFormedApiKey } from './api-key-format';
import { preparedQuery } from '@app/database';

interface CacheEntry {
  ctx: AuthContext;
  /** When the load that produced it started (real time). */
  loadedAt: number;
  /** The stored form of the key, which invalidations name. */
  hash: string;
}

const MAX_ENTRIES = 50_000;
/**
 * Hashes that matched no key, remembered apart from the verified keys so that a flood of
 * made-up keys (anyone can compute a valid checksum) can never push a real key out. Short-lived
 * and dropped by any invalidation naming the hash: a key is random, so one created after its
 * hash was refused is practically impossible, and would wait NEGATIVE_TTL_MS at most.
 */
const MAX_UNKNOWN = 10_000;
const NEGATIVE_TTL_MS = 5_000;
/**
 * Hashes of keys Postgres confirmed, kept well past the cache's freshness: a verified key whose
 * entry went stale (AUTH_CACHE_TTL_MS, an invalidation, 1 s while pub/sub is down) is
 * revalidated without charging its client address first. Without this, a busy key behind an
 * address whose anonymous budget was spent got 429s until the address's window reset, once
 * per freshness period. Hashes, not keys: nothing here authenticates anyone.
 */
const VERIFIED_MEMORY_MS = 60 * 60_000;
/** While pub/sub is down we cannot hear invalidations: trust the cache this long at most. */
const UNSUBSCRIBED_TTL_MS = 1_000;
const LAST_USED_FLUSH_MS = 5_000;
/** How often the subscription's connection must prove it is alive (checkSubscription). */
const SUBSCRIPTION_PROBE_MS = 1_000;

/**
 * Verifies Bearer keys without a Postgres query per request: verified keys are cached in
 * process; revocation, rotation and plan changes are broadcast over Redis pub/sub and drop
 * the entry on every replica at once. Expiry and rotation grace ends need no broadcast: the
 * cached timestamps are checked on every request.
 *
 * The cache is keyed by the presented key itself, so a hit is one Map lookup: the checksum
 * and SHA-256 (a third of the gate's cost, profiled) run only on a miss. The process holds
 * every key it serves while it serves it anyway; it follows that a heap snapshot of the API
 * contains keys in use and must be handled as a secret (docs/keys-and-limits.md).
 *
 * An entry is trusted for AUTH_CACHE_TTL_MS only if it was loaded while the subscription was
 * live (it cannot have missed an invalidation); anything else is revalidated after 1 s, so a
 * pub/sub outage (or a message lost while reconnecting) delays a revocation by 1 s at most.
 */
@Injectable()
export class ApiKeyAuthenticator implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ApiKeyAuthenticator.name);
  private readonly cache = new Map<string, CacheEntry>();
  /** Hash of an unknown key -> when it was found unknown (real ms). */
  private readonly unknown = new Map<string, number>();
  /** Hash of a key Postgres confirmed -> when (real ms). */
  private readonly verified = new Map<string, number>();
  private readonly lastUsed = new Map<number, number>();
  private flushTimer?: NodeJS.Timeout;
  private probeTimer?: NodeJS.Timeout;
  private probing = false;
  /** Since when invalidations are being heard (real ms); undefined while not subscribed. */
  private listeningSince?: number;
  /** Bumped by every invalidation: a load that raced one must not be cached. */
  private epoch = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly broadcast: RedisBroadcast,
  ) {}

  onModuleInit(): void {
    // Entries loaded after the subscription is acknowledged cannot have missed a message (the
    // publish follows the commit, which follows their read); earlier ones may have.
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
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.probeTimer);
    await this.flushLastUsed();
  }

  /** The caller behind a Bearer token, or null for any key that must be refused. */
  async authenticate(token: string, nowMs = Date.now()): Promise<AuthContext | null> {
    const cached = this.cached(token, nowMs);
    return cached !== undefined ? cached : this.lookUp(token, nowMs);
  }

  /**
   * The answer for a verified key this process holds, without any I/O (the hot path: one Map
   * lookup); undefined when only Postgres can tell, which the gate pays for from the client
   * address's budget first.
   */
  cached(token: string, nowMs = Date.now()): AuthContext | null | undefined {
    const entry = this.cache.get(token);
    if (!entry || !this.isFresh(entry)) return undefined;
    return this.usable(entry.ctx, nowMs);
  }

  /**
   * Whether Postgres confirmed this key in the last VERIFIED_MEMORY_MS: its revalidation is the
   * key's own cost, not its client address's (the gate charges only keys never seen).
   */
  wasVerified(token: string): boolean {
    if (!isWellFormedApiKey(token)) return false;
    const at = this.verified.get(hashApiKey(token));
    return at !== undefined && Date.now() - at < VERIFIED_MEMORY_MS;
  }

  /** Postgres decides (unless the key is malformed or was found unknown moments ago). */
  async lookUp(token: string, nowMs = Date.now()): Promise<AuthContext | null> {
    if (!isWellFormedApiKey(token)) return null;
    const hash = hashApiKey(token);
    const refusedAt = this.unknown.get(hash);
    if (refusedAt !== undefined && Date.now() - refusedAt < NEGATIVE_TTL_MS) return null;
    const epoch = this.epoch;
    const loadedAt = Date.now();
    const ctx = await this.load(hash);
    // A load that raced an invalidation is answered but not remembered.
    if (epoch === this.epoch) {
      if (ctx) remember(this.cache, MAX_ENTRIES, token, { loadedAt, ctx, hash });
      else remember(this.unknown, MAX_UNKNOWN, hash, loadedAt);
    }
    if (ctx && isUsable(ctx, nowMs)) remember(this.verified, MAX_ENTRIES, hash, loadedAt);
    else this.verified.delete(hash);
    return ctx ? this.usable(ctx, nowMs) : null;
  }

  private usable(ctx: AuthContext, nowMs: number): AuthContext | null {
    if (!isUsable(ctx, nowMs)) return null;
    this.lastUsed.set(ctx.keyId, nowMs);
    return ctx;
  }

  invalidate(msg: AuthInvalidation): void {
    this.epoch++;
    if (msg.keyHash !== undefined) this.unknown.delete(msg.keyHash);
    for (const [token, entry] of this.cache) {
      if (entry.hash === msg.keyHash || (msg.accountId !== undefined && entry.ctx?.accountId === msg.accountId)) {
        this.cache.delete(token);
      }
    }
  }

  /**
   * A connection can die without closing (a silent network partition): then no invalidation
   * arrives and nothing says so, and the cache would be trusted for AUTH_CACHE_TTL_MS. A probe
   * each second proves the subscription alive (RedisBroadcast); one that fails stops trusting
   * the cache at once and subscribes again.
   */
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

  /** Entries past their freshness would be reloaded anyway; dropping them bounds how long a key stays in memory. */
  private dropStale(): void {
    for (const [token, entry] of this.cache) if (!this.isFresh(entry)) this.cache.delete(token);
    const now = Date.now();
    for (const [hash, refusedAt] of this.unknown) if (now - refusedAt >= NEGATIVE_TTL_MS) this.unknown.delete(hash);
    for (const [hash, at] of this.verified) if (now - at >= VERIFIED_MEMORY_MS) this.verified.delete(hash);
  }

  private isFresh(entry: CacheEntry): boolean {
    const age = Date.now() - entry.loadedAt;
    const heard = this.listeningSince !== undefined && entry.loadedAt >= this.listeningSince;
    return age < (heard ? this.config.authCacheTtlMs : UNSUBSCRIBED_TTL_MS);
  }

  private async load(hash: string): Promise<AuthContext | null> {
    const rows: AuthContext[] = await preparedQuery(
      this.dataSource,
      `SELECT k.id AS "keyId", k.account_id AS "accountId", k.scopes, k.expires_at AS "expiresAt",
              k.rotated_out_at AS "rotatedOutAt", k.revoked_at AS "revokedAt",
              a.plan, a.limit_per_minute AS "limitPerMinute", a.limit_per_day AS "limitPerDay"
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = $1`,
      [hash],
    );
    return rows[0] ?? null;
  }

  /** One UPDATE for every key used since the last flush, instead of a write per request. */
  private async flushLastUsed(): Promise<void> {
    if (!this.lastUsed.size) return;
    const batch = [...this.lastUsed];
    this.lastUsed.clear();
    try {
      await preparedQuery(
        this.dataSource,
        `UPDATE api_keys k SET last_used_at = v.t
           FROM unnest($1::bigint[], $2::timestamptz[]) AS v(id, t)
          WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.t)`,
        [batch.map(([id]) => id), batch.map(([, t]) => new Date(t).toISOString())],
      );
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'last_used_at flush failed');
    }
  }
}

/** Sets a bounded map's entry, forgetting the oldest one when it is full. */
function remember<K, V>(map: Map<K, V>, max: number, key: K, value: V): void {
  if (!map.has(key) && map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
