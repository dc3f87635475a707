import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** As Standard Webhooks has it: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

// A secret made before Standard Webhooks is base64url without padding; Node's base64 decoder takes both alphabets,
// so its standard spelling (`-`→`+`, `_`→`/`, `=` appended) verifies with any Standard Webhooks library.
export function standardSigningKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** A type, not an interface: it passes where a header record is taken. */
export type SignedHeaders = Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>;

/** One signature per secret (the current first, then one still in its rotation grace), space-separated. */
export function standardWebhookHeaders(
  secrets: readonly string[],
  messageId: string,
  rawBody: string,
  now: Date = new Date(),
): SignedHeaders {
  const t = Math.floor(now.getTime() / 1000);
  const signatures = secrets.map(
    (s) => `v1,${createHmac('sha256', standardSigningKey(s)).update(`${messageId}.${t}.${rawBody}`).digest('base64')}`,
  );
  return { 'webhook-id': messageId, 'webhook-timestamp': String(t), 'webhook-signature': signatures.join(' ') };
}

/** The legacy header's key is the secret string itself, prefix included. */
export function legacySignatureDigest(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

/** `t=<unix seconds>,v1=<hex digest>`, one v1 per secret. */
export function legacySignatureHeader(secrets: readonly string[], rawBody: string, now: Date = new Date()): string {
  const t = Math.floor(now.getTime() / 1000);
  return [`t=${t}`, ...secrets.map((s) => `v1=${legacySignatureDigest(s, t, rawBody)}`)].join(',');
}
