import { hash, randomBytes } from 'node:crypto';

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

/** SHA-256's block: an HMAC key longer than it is hashed first (RFC 2104). */
const BLOCK_BYTES = 64;

// HMAC-SHA256 of one key as two one-shot hashes over its padded blocks, made once: an Hmac object per signature cost
// twice as much (OpenSSL sets up a context per object), and a delivery signs twice.
class HmacSha256 {
  private readonly inner = Buffer.alloc(BLOCK_BYTES, 0x36);
  private readonly outer = Buffer.alloc(BLOCK_BYTES, 0x5c);

  constructor(key: Buffer) {
    const k = key.length > BLOCK_BYTES ? hash('sha256', key, 'buffer') : key;
    for (let i = 0; i < k.length; i++) {
      this.inner[i] ^= k[i];
      this.outer[i] ^= k[i];
    }
  }

  digest(message: string, encoding: 'base64' | 'hex'): string {
    const innerInput = Buffer.allocUnsafe(BLOCK_BYTES + Buffer.byteLength(message));
    this.inner.copy(innerInput);
    innerInput.write(message, BLOCK_BYTES, 'utf8');
    return hash('sha256', Buffer.concat([this.outer, hash('sha256', innerInput, 'buffer')]), encoding);
  }
}

// Signs with the secrets of one webhook: their keys are prepared once, so a batch of deliveries pays for them once.
export class WebhookSigner {
  private readonly standard: HmacSha256[];
  private readonly legacy: HmacSha256[];

  /** The current secret first, then one still in its rotation grace. */
  constructor(secrets: readonly string[]) {
    this.standard = secrets.map((s) => new HmacSha256(standardSigningKey(s)));
    // The legacy header's key is the secret string itself, prefix included.
    this.legacy = secrets.map((s) => new HmacSha256(Buffer.from(s, 'utf8')));
  }

  /** One signature per secret, space-separated. */
  standardHeaders(messageId: string, rawBody: string, now: Date = new Date()): SignedHeaders {
    const t = Math.floor(now.getTime() / 1000);
    const signed = `${messageId}.${t}.${rawBody}`;
    const signatures = this.standard.map((key) => `v1,${key.digest(signed, 'base64')}`);
    return { 'webhook-id': messageId, 'webhook-timestamp': String(t), 'webhook-signature': signatures.join(' ') };
  }

  /** `t=<unix seconds>,v1=<hex digest>`, one v1 per secret. */
  legacyHeader(rawBody: string, now: Date = new Date()): string {
    const t = Math.floor(now.getTime() / 1000);
    const signed = `${t}.${rawBody}`;
    return [`t=${t}`, ...this.legacy.map((key) => `v1=${key.digest(signed, 'hex')}`)].join(',');
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

export function legacySignatureHeader(secrets: readonly string[], rawBody: string, now: Date = new Date()): string {
  return new WebhookSigner(secrets).legacyHeader(rawBody, now);
}
