import { Inject, Injectable, Logger } from '@nestjs/common';
import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { AppConfig } from '@app/config';
import { REDIS, RedisClient } from '@app/redis';

export const REPLAY_TTL_MS = 24 * 3600 * 1000;
// If its request never finishes (process killed).
const IN_FLIGHT_TTL_MS = 60_000;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

interface Owned {
  redisKey: string;
  token: string;
  sealKey: Buffer;
}

export type Claim =
  | ({ kind: 'acquired' } & Owned)
  | { kind: 'in_flight'; fingerprint: string }
  /** `keyId` is undefined in records older than it. */
  | { kind: 'done'; fingerprint: string; response: StoredResponse; keyId?: number }
  /** The request goes ahead unprotected (docs/messages-and-idempotency.md). */
  | { kind: 'unavailable' };

const CLAIM = `
local existing = redis.call('HMGET', KEYS[1], 'fp', 'response', 'key')
if existing[1] then return existing end
redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'token', ARGV[2], 'key', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return nil`;
// Only the claim's owner may store or drop it: an expired claim may belong to another request.
const COMPLETE = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'response', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;
const RELEASE = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

const sha256 = (label: string, text: string) => createHash('sha256').update(`${label}\n${text}`).digest();

// Sealed under a key derived from the Idempotency-Key, which Redis never sees: a Redis dump does
// not reveal answers (POST /keys answers hold a secret).
function seal(response: StoredResponse, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(response), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
}

function unseal(sealed: string, key: Buffer): StoredResponse {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
}

/** One hash per account and key: fingerprint, owner token, API key id, answer. */
@Injectable()
export class IdempotencyStore {
  private readonly logger = new Logger(IdempotencyStore.name);

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly config: AppConfig,
  ) {}

  async claim(accountId: number, key: string, fingerprint: string, keyId: number): Promise<Claim> {
    // Hashed: any printable characters, fixed length, and the client's text is not kept.
    const redisKey = `${this.config.redisNamespace}:idem:{${accountId}}:${sha256('name', key).toString('hex')}`;
    const sealKey = sha256('seal', key);
    const token = randomUUID();
    try {
      const found = (await this.redis.eval(CLAIM, 1, redisKey, fingerprint, token, IN_FLIGHT_TTL_MS, keyId)) as
        [string, string | null, string | null] | null;
      if (!found) return { kind: 'acquired', redisKey, token, sealKey };
      const [storedFingerprint, response, storedKeyId] = found;
      return response
        ? {
            kind: 'done',
            fingerprint: storedFingerprint,
            response: unseal(response, sealKey),
            keyId: storedKeyId === null ? undefined : Number(storedKeyId),
          }
        : { kind: 'in_flight', fingerprint: storedFingerprint };
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'idempotency store unavailable; not protected');
      return { kind: 'unavailable' };
    }
  }

  async complete(claim: Owned, response: StoredResponse): Promise<void> {
    await this.run(COMPLETE, claim, seal(response, claim.sealKey), REPLAY_TTL_MS);
  }

  async release(claim: Owned): Promise<void> {
    await this.run(RELEASE, claim);
  }

  /** A failure leaves the claim to expire; the answer itself still goes out. */
  private async run(script: string, claim: Owned, ...args: (string | number)[]): Promise<void> {
    try {
      await this.redis.eval(script, 1, claim.redisKey, claim.token, ...args);
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'idempotency record not updated');
    }
  }
}
