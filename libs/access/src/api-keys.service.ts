import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig, Clock } from '@app/config';
import { preparedQuery } from '@app/database';
import { ApiError, describe } from '@app/errors';
import { UnitOfWork, Tx } from '@app/transactions';
import { accountQueries, apiKeyQueries, ApiKeyRow } from './access.queries';
import { Scope, SCOPES } from './scopes';
import { assertWithinQuota } from './quotas';
import { handOverBan } from './rate-limit-subject';
import { REDIS, RedisBroadcast, RedisClient } from '@app/redis';
import { AUTH_INVALIDATION_CHANNEL, AuthContext, AuthInvalidation } from './auth-context';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { displayPrefix, generateApiKey, hashApiKey, KeyTags } from './api-key-format';
import { SharedKeyMemory } from './shared-key-memory';

export interface NewApiKey {
  name: string;
  scopes?: Scope[];
  expiresAt?: Date | null;
}

/** Never the secret, never the hash. */
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

export type OperatorApiKeyView = ApiKeyView & { revokedAt: string | null };

// Longer, an old secret would be a second key in all but the quota.
export const MAX_ROTATION_GRACE_SECONDS = 7 * 86_400;

const DEFAULT_SCOPES: Scope[] = ['read', 'write'];
export const OWNER_SCOPES: Scope[] = ['read', 'write', 'admin'];

/** Absent when the operator CLI calls. */
export type Caller = Pick<AuthContext, 'keyId' | 'scopes'>;

function lineage(parent: ApiKeyRow, scopes: Scope[], expiresAt: Date | null): { missing: Scope[]; tooLate: boolean } {
  return {
    missing: scopes.filter((s) => !parent.scopes.includes(s)),
    tooLate: parent.expiresAt !== null && (expiresAt === null || expiresAt.getTime() > parent.expiresAt.getTime()),
  };
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toApiKeyView(k: ApiKeyRow): ApiKeyView {
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

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger(ApiKeysService.name);

  constructor(
    private readonly uow: UnitOfWork,
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly authenticator: ApiKeyAuthenticator,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly redisBroadcast: RedisBroadcast,
    private readonly shared: SharedKeyMemory,
    private readonly tags: KeyTags,
  ) {}

  /** The operator CLI calls it directly; over the API the new key cannot outgrow `caller` (403, 422). */
  async create(accountId: number, input: NewApiKey, caller?: Caller): Promise<IssuedApiKey> {
    if (!input.name || [...input.name].length > 100) throw ApiError.validation('name', 'must be 1 to 100 characters');
    const unknown = (input.scopes ?? []).filter((s) => !SCOPES.includes(s));
    if (unknown.length) throw ApiError.validation('scopes', `unknown scope ${unknown.join(', ')}`);
    if (input.expiresAt && input.expiresAt.getTime() <= this.clock.now().getTime()) {
      throw ApiError.validation('expiresAt', 'must be in the future');
    }
    if (!caller)
      return this.primed(
        await this.uow.run(async (tx) => {
          await assertWithinQuota(tx.manager, accountId, 'keys', this.clock.now());
          return this.issue(tx, accountId, input);
        }),
      );
    assertManages(caller);
    const issued = await this.uow.run(async (tx) => {
      const parent = await this.lockManager(tx, accountId, caller.keyId);
      const scopes = input.scopes?.length ? [...new Set(input.scopes)] : parent.scopes.filter((s) => s !== 'admin');
      if (!scopes.length) throw ApiError.validation('scopes', 'required: the calling key has no read or write scope');
      const expiresAt = input.expiresAt ?? parent.expiresAt;
      const { missing, tooLate } = lineage(parent, scopes, expiresAt);
      if (missing.length) {
        const message = `the calling key lacks ${missing.join(', ')}`;
        throw new ApiError('insufficient_scope', `scopes: ${message}`, [{ field: 'scopes', message }]);
      }
      if (tooLate) {
        const message = `must be no later than ${(parent.expiresAt as Date).toISOString()}, the calling key's expiry`;
        throw new ApiError('key_expiry_too_late', `expiresAt: ${message}`, [{ field: 'expiresAt', message }]);
      }
      await assertWithinQuota(tx.manager, accountId, 'keys', this.clock.now());
      return this.issue(tx, accountId, { name: input.name, scopes, expiresAt });
    });
    return this.primed(issued);
  }

  async primed(issued: IssuedApiKey): Promise<IssuedApiKey> {
    await this.authenticator.prime(issued.secret);
    return issued;
  }

  async list(accountId: number, caller?: Caller): Promise<ApiKeyView[]> {
    if (caller) assertManages(caller);
    const keys = await preparedQuery<ApiKeyRow>(
      this.dataSource,
      apiKeyQueries.activeOfAccount(accountId, this.clock.now()),
    );
    return keys.map(toApiKeyView);
  }

  /** Revoked, expired and rotated-out keys count too. */
  async belongsTo(accountId: number, keyId: number): Promise<boolean> {
    const rows = await preparedQuery(this.dataSource, apiKeyQueries.exists(accountId, keyId));
    return rows.length > 0;
  }

  /** Working keys issued before tags: what is left to rotate. */
  async countLegacy(): Promise<number> {
    const [row] = await preparedQuery<{ n: string }>(
      this.dataSource,
      apiKeyQueries.countActiveLegacy(this.clock.now()),
    );
    return Number(row.n);
  }

  async listAll(accountId: number): Promise<OperatorApiKeyView[]> {
    const keys = await preparedQuery<ApiKeyRow>(this.dataSource, apiKeyQueries.allOfAccount(accountId));
    return keys.map((k) => ({ ...toApiKeyView(k), revokedAt: iso(k.revokedAt) }));
  }

  /** Never the account's last key able to manage keys (409: the owner would be locked out). */
  async revoke(accountId: number, keyId: number, caller?: Caller): Promise<void> {
    if (caller) assertManages(caller);
    const key = await this.uow.run(async (tx) => {
      const manager = caller && (await this.lockManager(tx, accountId, caller.keyId));
      const k = await this.findActive(tx, accountId, keyId);
      if (manager && k.id !== manager.id) assertCovers(manager, k, 'revoke');
      if (manager && (await this.isLastManager(tx, accountId, k))) {
        throw new ApiError(
          'last_admin_key',
          'This is the last key of the account able to manage keys; create another admin key first',
        );
      }
      k.revokedAt = this.clock.now();
      await preparedQuery(tx.manager, apiKeyQueries.revoke(k.id, k.revokedAt));
      await tx.emit({
        accountId,
        type: 'api_key.revoked',
        resourceType: 'api_key',
        resourceId: k.id,
        data: toApiKeyView(k),
      });
      return k;
    });
    await this.broadcast({ keyHash: key.keyHash, keyId: key.id });
  }

  /** The old secret works until the grace ends (at most 7 days) and counts toward the quota till then. */
  async rotate(accountId: number, keyId: number, gracePeriodSeconds?: number, caller?: Caller): Promise<IssuedApiKey> {
    if (caller) assertManages(caller);
    const grace = gracePeriodSeconds ?? this.config.keyRotationGraceSeconds;
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_ROTATION_GRACE_SECONDS)
      throw ApiError.validation('gracePeriodSeconds', `must be an integer from 0 to ${MAX_ROTATION_GRACE_SECONDS}`);
    const { issued, oldHash, oldId } = await this.uow.run(async (tx) => {
      const manager = caller && (await this.lockManager(tx, accountId, caller.keyId));
      const old = await this.findActive(tx, accountId, keyId);
      if (old.rotatedOutAt) throw new ApiError('not_found', 'API key already rotated; rotate its successor instead');
      // The new secret would be a key of the old one's scopes and expiry in the caller's hands.
      if (manager && old.id !== manager.id) assertCovers(manager, old, 'rotate');
      old.rotatedOutAt = new Date(this.clock.now().getTime() + grace * 1000);
      await preparedQuery(tx.manager, apiKeyQueries.rotateOut(old.id, old.rotatedOutAt));
      // After the update: an old key with no grace left is out, so the new one takes its place.
      await assertWithinQuota(tx.manager, accountId, 'keys', this.clock.now());
      const fresh = await this.issue(tx, accountId, { name: old.name, scopes: old.scopes, expiresAt: old.expiresAt });
      // Before the commit, so the new secret is never usable unbanned. Without Redis the rotation
      // still happens: rotating a leaked key matters more than a ban of minutes.
      await handOverBan(this.redis, this.config.redisNamespace, accountId, old.id, fresh.id).catch((err: Error) =>
        this.logger.warn({ err: { message: err.message }, keyId: old.id }, 'ban not handed over on rotation'),
      );
      await tx.emit({
        accountId,
        type: 'api_key.rotated',
        resourceType: 'api_key',
        resourceId: old.id,
        data: toApiKeyView(old),
      });
      return { issued: fresh, oldHash: old.keyHash, oldId: old.id };
    });
    await this.broadcast({ keyHash: oldHash, keyId: oldId });
    return this.primed(issued);
  }

  /** Never throws: a ban that cannot be recorded is worth a log line, not a different answer. */
  async recordBan(auth: AuthContext): Promise<void> {
    try {
      await this.uow.run((tx) =>
        tx.emit({
          accountId: auth.accountId,
          type: 'api_key.banned',
          resourceType: 'api_key',
          resourceId: auth.keyId,
          data: { id: auth.keyId, bannedAt: this.clock.now().toISOString() },
        }),
      );
    } catch (err) {
      this.logger.error({ err: describe(err), keyId: auth.keyId }, 'api_key.banned event not recorded');
    }
  }

  async broadcast(msg: AuthInvalidation): Promise<void> {
    // This replica at once, not when its own message comes back over pub/sub.
    this.authenticator.invalidate(msg);
    await this.shared.forget(msg);
    try {
      await this.redisBroadcast.publish(AUTH_INVALIDATION_CHANNEL, JSON.stringify(msg));
    } catch (err) {
      // Replicas that cannot hear us also cannot hear anyone: they revalidate every second.
      this.logger.warn({ err: { message: (err as Error).message } }, 'auth invalidation not published');
    }
  }

  async issue(tx: Tx, accountId: number, input: NewApiKey): Promise<IssuedApiKey> {
    const secret = generateApiKey(this.tags);
    const [key] = await preparedQuery<ApiKeyRow>(
      tx.manager,
      apiKeyQueries.insert(accountId, {
        name: input.name,
        prefix: displayPrefix(secret),
        keyHash: hashApiKey(secret),
        scopes: input.scopes?.length ? [...new Set(input.scopes)] : [...DEFAULT_SCOPES],
        expiresAt: input.expiresAt ?? null,
      }),
    );
    const view = toApiKeyView(key);
    await tx.emit({ accountId, type: 'api_key.created', resourceType: 'api_key', resourceId: key.id, data: view });
    return { ...view, secret };
  }

  private async findActive(tx: Tx, accountId: number, keyId: number): Promise<ApiKeyRow> {
    const [k] = await preparedQuery<ApiKeyRow>(
      tx.manager,
      apiKeyQueries.lockActive(accountId, keyId, this.clock.now()),
    );
    if (!k) throw new ApiError('not_found', 'API key not found (or revoked, expired or rotated out)');
    return k;
  }

  /** Under the account's row lock: two keys revoking each other cannot both pass the last-admin check. */
  private async lockManager(tx: Tx, accountId: number, keyId: number): Promise<ApiKeyRow> {
    await preparedQuery(tx.manager, accountQueries.lockForKeys(accountId));
    const [me] = await preparedQuery<ApiKeyRow>(
      tx.manager,
      apiKeyQueries.activeById(accountId, keyId, this.clock.now()),
    );
    if (!me) throw new ApiError('invalid_api_key', 'The API key is unknown, revoked, expired or rotated out');
    if (me.rotatedOutAt) {
      throw new ApiError(
        'api_key_rotated_out',
        'This API key was rotated and works only until its grace period ends; manage keys with its replacement',
      );
    }
    return me;
  }

  private async isLastManager(tx: Tx, accountId: number, k: ApiKeyRow): Promise<boolean> {
    if (!k.scopes.includes('admin') || k.rotatedOutAt) return false;
    const [other] = await preparedQuery(tx.manager, apiKeyQueries.otherManager(accountId, k.id, this.clock.now()));
    return !other;
  }
}

/** Before any query, so an idempotent replay cannot hand out a secret. */
export function assertManages(caller: Caller): void {
  if (!caller.scopes.includes('admin')) {
    throw new ApiError('insufficient_scope', 'Managing keys needs the admin scope, which this API key lacks');
  }
}

function assertCovers(manager: ApiKeyRow, target: ApiKeyRow, verb: 'rotate' | 'revoke'): void {
  const { missing, tooLate } = lineage(manager, target.scopes, target.expiresAt);
  if (missing.length || tooLate) {
    throw new ApiError(
      'insufficient_scope',
      `This API key cannot ${verb} a key with scopes or an expiry beyond its own; use a key that has them`,
    );
  }
}
