import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery } from '@app/database';
import { apiKeyQueries } from './access.queries';
import { REDIS, RedisClient } from '@app/redis';
import { AuthContext } from './auth-context';

// Carries keys through a rolling restart; invalidations delete entries sooner.
const TTL_MS = 60 * 60_000;
// Hashes no key has can be made up endlessly (a leaked tag key, live old-format prefixes): kept briefly.
const UNKNOWN_TTL_MS = 60_000;
const UNKNOWN = 'none';
// For a lookup on another replica that raced the first delete.
const SECOND_DELETE_MS = 2_000;

type Stored = Omit<AuthContext, 'expiresAt' | 'rotatedOutAt' | 'revokedAt'> & {
  expiresAt: number | null;
  rotatedOutAt: number | null;
  revokedAt: number | null;
};

const ms = (d: Date | null) => (d ? new Date(d).getTime() : null);
const date = (n: number | null) => (n === null ? null : new Date(n));

/**
 * Keys' answers shared by every API replica (docs/internals/decisions/0004-shared-verified-key-memory.md), refused ones too, so a
 * revoked key costs one Postgres lookup in all; Redis away only means Postgres.
 */
@Injectable()
export class SharedKeyMemory {
  private readonly logger = new Logger(SharedKeyMemory.name);

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  private keyOf(hash: string): string {
    return `${this.config.redisNamespace}:auth:key:${hash}`;
  }

  /** null: no key has this hash; undefined: nothing remembered. */
  async get(hash: string): Promise<AuthContext | null | undefined> {
    try {
      const text = await this.redis.get(this.keyOf(hash));
      if (!text) return undefined;
      if (text === UNKNOWN) return null;
      const s = JSON.parse(text) as Stored;
      return { ...s, expiresAt: date(s.expiresAt), rotatedOutAt: date(s.rotatedOutAt), revokedAt: date(s.revokedAt) };
    } catch {
      return undefined;
    }
  }

  /** null: no key has this hash, which never replaces a key's answer (one issued meanwhile). */
  async put(hash: string, ctx: AuthContext | null): Promise<void> {
    try {
      if (!ctx) {
        await this.redis.set(this.keyOf(hash), UNKNOWN, 'PX', UNKNOWN_TTL_MS, 'NX');
        return;
      }
      const stored: Stored = {
        ...ctx,
        expiresAt: ms(ctx.expiresAt),
        rotatedOutAt: ms(ctx.rotatedOutAt),
        revokedAt: ms(ctx.revokedAt),
      };
      await this.redis.set(this.keyOf(hash), JSON.stringify(stored), 'PX', TTL_MS);
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'key answer not shared');
    }
  }

  async forget(target: { keyHash?: string; accountId?: number }): Promise<void> {
    const hashes = target.keyHash ? [target.keyHash] : [];
    if (target.accountId !== undefined) {
      const rows = await preparedQuery<{ hash: string }>(
        this.dataSource,
        apiKeyQueries.unrevokedHashes(target.accountId),
      );
      hashes.push(...rows.map((r) => r.hash));
    }
    if (!hashes.length) return;
    await this.delete(hashes);
    setTimeout(() => void this.delete(hashes), SECOND_DELETE_MS).unref();
  }

  // One DEL per key: on a cluster the keys lie in different slots.
  private async delete(hashes: string[]): Promise<void> {
    try {
      await Promise.all(hashes.map((hash) => this.redis.del(this.keyOf(hash))));
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'shared verified keys not forgotten');
    }
  }
}
