import { createHmac, createSecretKey, KeyObject, randomBytes } from 'node:crypto';

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

// Signs with the secrets of one webhook: their keys are made once (a Buffer or string key costs a key object per HMAC),
// so a batch of deliveries pays for them once.
export class WebhookSigner {
  private readonly standard: KeyObject[];
  private readonly legacy: KeyObject[];

  /** The current secret first, then one still in its rotation grace. */
  constructor(secrets: readonly string[]) {
    this.standard = secrets.map((s) => createSecretKey(standardSigningKey(s)));
    // The legacy header's key is the secret string itself, prefix included.
    this.legacy = secrets.map((s) => createSecretKey(Buffer.from(s, 'utf8')));
  }

  /** One signature per secret, space-separated. */
  standardHeaders(messageId: string, rawBody: string, now: Date = new Date()): SignedHeaders {
    const t = Math.floor(now.getTime() / 1000);
    const signatures = this.standard.map(
      (key) => `v1,${createHmac('sha256', key).update(`${messageId}.${t}.${rawBody}`).digest('base64')}`,
    );
    return { 'webhook-id': messageId, 'webhook-timestamp': String(t), 'webhook-signature': signatures.join(' ') };
  }

  /** `t=<unix seconds>,v1=<hex digest>`, one v1 per secret. */
  legacyHeader(rawBody: string, now: Date = new Date()): string {
    const t = Math.floor(now.getTime() / 1000);
    return [`t=${t}`, ...this.legacy.map((key) => `v1=${legacySignatureDigest(key, t, rawBody)}`)].join(',');
  }
}

export function standardWebhookHeaders(
  secrets: readonly string[],
  messageId: string,
  rawBody: string,
  now: Date = new Date(),
): SignedHeaders {
  return new WebhookSigner(secrets).standardHeaders(messageId, rawBody, now);
}

export function legacySignatureDigest(key: string | KeyObject, timestamp: number, rawBody: string): string {
  return createHmac('sha256', key).update(`${timestamp}.${rawBody}`).digest('hex');
}

export function legacySignatureHeader(secrets: readonly string[], rawBody: string, now: Date = new Date()): string {
  return new WebhookSigner(secrets).legacyHeader(rawBody, now);
}
