import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Key format: `pst_` + 32 base62 chars of secret (190 random bits) + 6 base62 chars of
 * CRC32 checksum over the secret part. The prefix lets secret scanners find leaked keys and
 * the checksum lets us (and them) refuse a mistyped key without any lookup.
 */
export const KEY_PREFIX = 'pst_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_CHARS = 32;
const CHECKSUM_CHARS = 6;
export const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${SECRET_CHARS + CHECKSUM_CHARS}}$`);

function base62(n: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

function checksum(secret: string): string {
  return base62(BigInt(crc32(secret)), CHECKSUM_CHARS);
}

export function generateApiKey(): string {
  // 24 random bytes, reduced to 32 base62 digits: 62^32 ≈ 2^190 keeps the full 190 bits.
  const secret = base62(BigInt(`0x${randomBytes(24).toString('hex')}`), SECRET_CHARS);
  return `${KEY_PREFIX}${secret}${checksum(secret)}`;
}

/** Shape and checksum only: true means "worth looking up", not "valid". */
export function isWellFormedApiKey(token: string): boolean {
  if (!KEY_PATTERN.test(token)) return false;
  const body = token.slice(KEY_PREFIX.length);
  return checksum(body.slice(0, SECRET_CHARS)) === body.slice(SECRET_CHARS);
}

/** Runs on every request (the key cache is keyed by it): one-shot, no Hash object to finalise. */
export function hashApiKey(token: string): string {
  return hash('sha256', token, 'hex');
}

/** What we keep and show of a key: enough to recognise it in a list, useless to an attacker. */
export function displayPrefix(token: string): string {
  return token.slice(0, KEY_PREFIX.length + 6);
}
