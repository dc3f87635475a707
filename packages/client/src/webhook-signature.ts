import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Event } from './schema';

/** A delivery's body: an event as GET /events shows it, or the `webhook.test` of POST /webhooks/{id}/test. */
export type WebhookPayload = Event | { type: 'webhook.test'; [field: string]: unknown };

/** Why a delivery was refused; `reason` says which check failed. */
export class WebhookSignatureError extends Error {
  constructor(readonly reason: 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'mismatch') {
    super(`webhook signature refused: ${reason}`);
    this.name = 'WebhookSignatureError';
  }
}

export interface VerifyWebhookOptions {
  /** The raw request body, exactly as received (before any JSON parsing). */
  payload: string | Buffer;
  /** The Petstore-Signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
  header: string | null | undefined;
  /** The webhook's `whsec_...` secret from POST /webhooks. */
  secret: string;
  /** How far the signed time may be from now, either way (replays older than this are refused). */
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Checks a delivery's Petstore-Signature (docs/events-and-webhooks.md) in constant time and returns
 * the parsed event; throws WebhookSignatureError when the header is missing, malformed, too old
 * or too new, or signed with another secret.
 */
export function verifyWebhook({
  payload,
  header,
  secret,
  toleranceSeconds = 300,
  now = new Date(),
}: VerifyWebhookOptions): WebhookPayload {
  if (!header) throw new WebhookSignatureError('missing_header');
  const parts = new Map(
    header.split(',').map((kv) => [kv.slice(0, kv.indexOf('=')).trim(), kv.slice(kv.indexOf('=') + 1).trim()]),
  );
  const t = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!Number.isInteger(t) || !given || !/^[0-9a-f]{64}$/.test(given)) {
    throw new WebhookSignatureError('malformed_header');
  }
  if (Math.abs(now.getTime() / 1000 - t) > toleranceSeconds)
    throw new WebhookSignatureError('timestamp_out_of_tolerance');
  const body = typeof payload === 'string' ? payload : payload.toString('utf8');
  // hex HMAC-SHA256 keyed by the whole secret string, over "<t>.<raw body>".
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  if (!timingSafeEqual(Buffer.from(given, 'hex'), expected)) throw new WebhookSignatureError('mismatch');
  return JSON.parse(body) as WebhookPayload;
}
