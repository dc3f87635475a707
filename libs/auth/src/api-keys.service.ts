import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { AppConfig, Clock } from '@app/config';
import { ApiKey, Scope, SCOPES } from '@app/database';
import { ApiError } from '@app/errors';
import { TransactionService, Tx } from '@app/outbox';
import { REDIS } from '@app/redis';
import { AUTH_INVALIDATION_CHANNEL, AuthInvalidation } from './auth-context';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key-format';

export interface NewApiKey {
  name: string;
  scopes?: Scope[];
  expiresAt?: Date | null;
}

/** A key as API users see it: never the secret, never the hash. */
export interface ApiKeyView {
  id: number;
  name: string;
  prefix: string;
  scopes: Scope[];
  expiresAt: string | null;
  rotatedOutAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

export type IssuedApiKey = ApiKeyView & { secret: string };

/** A key that still works: not revoked, not past its expiry, not past the end of a rotation grace. */
const ACTIVE =
  'k.revokedAt IS NULL AND (k.expiresAt IS NULL OR k.expiresAt > :now) AND (k.rotatedOutAt IS NULL OR k.rotatedOutAt > :now)';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toApiKeyView(k: ApiKey): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    expiresAt: iso(k.expiresAt),
    rotatedOutAt: iso(k.rotatedOutAt),
    lastUsedAt: iso(k.lastUsedAt),
    createdAt: iso(k.createdAt) as string,
  };
}

/** Issues, lists, revokes and rotates an account's keys. */
@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger(ApiKeysService.name);

  constructor(
    private readonly tx: TransactionService,
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly authenticator: ApiKeyAuthenticator,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  /** Validated here too (not only by the API's DTO): the operator CLI calls it directly. */
  async create(accountId: number, input: NewApiKey): Promise<IssuedApiKey> {
    if (!input.name || [...input.name].length > 100) throw ApiError.validation('name', 'must be 1 to 100 characters');
    const unknown = (input.scopes ?? []).filter((s) => !SCOPES.includes(s));
    if (unknown.length) throw ApiError.validation('scopes', `unknown scope ${unknown.join(', ')}`);
    if (input.expiresAt && input.expiresAt.getTime() <= this.clock.now().getTime()) {
      throw ApiError.validation('expiresAt', 'must be in the future');
    }
    return this.tx.run((tx) => this.issue(tx, accountId, input));
  }

  async list(accountId: number): Promise<ApiKeyView[]> {
    const keys = await this.dataSource
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .where('k.accountId = :accountId', { accountId })
      .andWhere(ACTIVE, { now: this.clock.now() })
      .orderBy('k.id')
      .getMany();
    return keys.map(toApiKeyView);
  }

  async revoke(accountId: number, keyId: number): Promise<void> {
    const key = await this.tx.run(async (tx) => {
      const k = await this.findActive(tx, accountId, keyId);
      k.revokedAt = this.clock.now();
      await tx.manager.save(k);
      await tx.emit({
        accountId,
        type: 'api_key.revoked',
        resourceType: 'api_key',
        resourceId: k.id,
        data: toApiKeyView(k),
      });
      return k;
    });
    await this.broadcast({ keyHash: key.keyHash });
  }

  /** A new secret with the same name, scopes and expiry; the old one works until the grace period ends. */
  async rotate(accountId: number, keyId: number, gracePeriodSeconds?: number): Promise<IssuedApiKey> {
    const grace = gracePeriodSeconds ?? this.config.keyRotationGraceSeconds;
    const { issued, oldHash } = await this.tx.run(async (tx) => {
      const old = await this.findActive(tx, accountId, keyId);
      // Only the newest secret of a key can be rotated; an old one in its grace period is on its way out.
      if (old.rotatedOutAt) throw new ApiError('not_found', 'API key already rotated; rotate its successor instead');
      old.rotatedOutAt = new Date(this.clock.now().getTime() + grace * 1000);
      await tx.manager.save(old);
      const fresh = await this.issue(tx, accountId, { name: old.name, scopes: old.scopes, expiresAt: old.expiresAt });
      await tx.emit({
        accountId,
        type: 'api_key.rotated',
        resourceType: 'api_key',
        resourceId: old.id,
        data: toApiKeyView(old),
      });
      return { issued: fresh, oldHash: old.keyHash };
    });
    await this.broadcast({ keyHash: oldHash });
    return issued;
  }

  /** Tells every API replica to forget what it cached; see ApiKeyAuthenticator. */
  async broadcast(msg: AuthInvalidation): Promise<void> {
    // This replica at once, not when its own message comes back over pub/sub.
    this.authenticator.invalidate(msg);
    try {
      await this.redis.publish(AUTH_INVALIDATION_CHANNEL, JSON.stringify(msg));
    } catch (err) {
      // Replicas that cannot hear us also cannot hear anyone: they revalidate every second.
      this.logger.warn({ err: { message: (err as Error).message } }, 'auth invalidation not published');
    }
  }

  /** Creates a key inside the caller's unit of work; the secret is in the answer and nowhere else. */
  async issue(tx: Tx, accountId: number, input: NewApiKey): Promise<IssuedApiKey> {
    const secret = generateApiKey();
    const key = tx.manager.getRepository(ApiKey).create({
      accountId,
      name: input.name,
      prefix: displayPrefix(secret),
      keyHash: hashApiKey(secret),
      scopes: input.scopes?.length ? [...new Set(input.scopes)] : ['read', 'write'],
      expiresAt: input.expiresAt ?? null,
    });
    await tx.manager.save(key);
    const view = toApiKeyView(key);
    await tx.emit({ accountId, type: 'api_key.created', resourceType: 'api_key', resourceId: key.id, data: view });
    return { ...view, secret };
  }

  private async findActive(tx: Tx, accountId: number, keyId: number): Promise<ApiKey> {
    const k = await tx.manager
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .setLock('pessimistic_write')
      .where('k.id = :keyId AND k.accountId = :accountId', { keyId, accountId })
      .andWhere(ACTIVE, { now: this.clock.now() })
      .getOne();
    if (!k) throw new ApiError('not_found', 'API key not found (or revoked, expired or rotated out)');
    return k;
  }
}
