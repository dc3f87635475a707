import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { FastHmacSha256 } from './fast-hmac';

// Both formats are `pst_` + base62 + a CRC32 checksum (6), so secret scanners treat them alike.
// Tagged: tag-key id (2) + secret (32) + hex HMAC tag (24), refused without I/O when forged.
// Legacy (issued before tags): secret (32).
export const KEY_PREFIX = 'pst_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_CHARS = 32;
const CHECKSUM_CHARS = 6;
export const TAG_KEY_ID_CHARS = 2;
const TAG_BYTES = 12;
const TAG_CHARS = TAG_BYTES * 2;
const LEGACY_LENGTH = KEY_PREFIX.length + SECRET_CHARS + CHECKSUM_CHARS;
const TAGGED_LENGTH = KEY_PREFIX.length + TAG_KEY_ID_CHARS + SECRET_CHARS + TAG_CHARS + CHECKSUM_CHARS;
export const KEY_PATTERN = new RegExp(
  `^${KEY_PREFIX}(?:[0-9A-Za-z]{${SECRET_CHARS + CHECKSUM_CHARS}}|[0-9A-Za-z]{${TAGGED_LENGTH - KEY_PREFIX.length}})$`,
);

export interface TagKey {
  id: string;
  key: Buffer;
}

export class KeyTags {
  private readonly byId: Map<string, FastHmacSha256>;

  constructor(private readonly keys: readonly TagKey[]) {
    this.byId = new Map(keys.map((k) => [k.id, new FastHmacSha256(k.key)]));
  }

  get signer(): TagKey {
    return this.keys[0];
  }

  /** undefined for an unknown id. */
  tag(id: string, signed: string): string | undefined {
    return this.byId.get(id)?.digest(signed).subarray(0, TAG_BYTES).toString('hex');
  }
}

export type KeyFormat = 'tagged' | 'legacy';

function base62(n: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

const base62Bytes = (bytes: Buffer, width: number) => base62(BigInt(`0x${bytes.toString('hex')}`), width);

// Plain number arithmetic, not BigInt: it runs on every key no cache holds.
function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(tags: KeyTags): string {
  // 62^32 ≈ 2^190 keeps the 24 random bytes' entropy.
  const signed = `${KEY_PREFIX}${tags.signer.id}${base62Bytes(randomBytes(24), SECRET_CHARS)}`;
  const body = `${signed.slice(KEY_PREFIX.length)}${tags.tag(tags.signer.id, signed)}`;
  return `${KEY_PREFIX}${body}${checksum(body)}`;
}

/** For tests of the upgrade path. */
export function generateLegacyApiKey(): string {
  const secret = base62Bytes(randomBytes(24), SECRET_CHARS);
  return `${KEY_PREFIX}${secret}${checksum(secret)}`;
}

/** null when it is not a key at all. */
export function keyFormat(token: string): KeyFormat | null {
  if (token.length !== TAGGED_LENGTH && token.length !== LEGACY_LENGTH) return null;
  if (!KEY_PATTERN.test(token)) return null;
  const body = token.slice(KEY_PREFIX.length, token.length - CHECKSUM_CHARS);
  if (checksum(body) !== token.slice(token.length - CHECKSUM_CHARS)) return null;
  return token.length === TAGGED_LENGTH ? 'tagged' : 'legacy';
}

export function hasValidTag(token: string, tags: KeyTags): boolean {
  const tagAt = TAGGED_LENGTH - CHECKSUM_CHARS - TAG_CHARS;
  const expected = tags.tag(
    token.slice(KEY_PREFIX.length, KEY_PREFIX.length + TAG_KEY_ID_CHARS),
    token.slice(0, tagAt),
  );
  return (
    expected !== undefined && timingSafeEqual(Buffer.from(expected), Buffer.from(token.slice(tagAt, tagAt + TAG_CHARS)))
  );
}

// One-shot: it runs on every cache miss.
export function hashApiKey(token: string): string {
  return hash('sha256', token, 'hex');
}

// Enough to recognise a key in a list, useless to an attacker.
export function displayPrefix(token: string): string {
  return token.slice(0, KEY_PREFIX.length + 6);
}
