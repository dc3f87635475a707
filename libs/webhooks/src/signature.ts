import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Petstore-Signature';

/** A webhook signing secret: 256 random bits with a recognisable prefix. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** hex HMAC-SHA256(secret, "<t>.<raw body>"); the secret string (prefix included) is the key. */
export function signatureDigest(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

/** The Petstore-Signature header value: `t=<unix seconds>,v1=<hex digest>`. */
export function signatureHeader(secret: string, rawBody: string, now: Date = new Date()): string {
  const t = Math.floor(now.getTime() / 1000);
  return `t=${t},v1=${signatureDigest(secret, t, rawBody)}`;
}

/**
 * What a receiver does (docs/events-and-webhooks.md shows the same): recompute the digest,
 * compare in constant time, and refuse timestamps too far from now (replays).
 */
export function verifySignature(
  secret: string,
  rawBody: string,
  header: string | undefined,
  toleranceSeconds = 300,
  now: Date = new Date(),
): boolean {
  if (!header) return false;
  const parts = new Map(
    header.split(',').map((kv) => {
      const i = kv.indexOf('=');
      return [kv.slice(0, i).trim(), kv.slice(i + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get('t'));
  const given = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(now.getTime() / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signatureDigest(secret, t, rawBody), 'hex');
  const actual = Buffer.from(given, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
