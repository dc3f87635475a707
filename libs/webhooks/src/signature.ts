import { createHmac, randomBytes } from 'node:crypto';

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
