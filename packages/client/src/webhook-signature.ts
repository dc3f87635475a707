import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Event } from './schema';
import type { WebHeaders } from './web-types';

/** A delivery's body: an event as GET /events shows it, or the `webhook.test` of POST /webhooks/{id}/test. */
export type WebhookPayload = Event | { type: 'webhook.test'; [field: string]: unknown };

/**
 * The service's default WEBHOOK_LEGACY_SIGNATURE_UNTIL: from then on deliveries carry only the
 * Standard Webhooks headers. The latest `legacyUntil` a receiver of a default deployment needs.
 */
export const LEGACY_SIGNATURE_SUNSET = new Date('2027-06-01T00:00:00Z');

/** Why a delivery was refused; `reason` says which check failed. */
export class WebhookSignatureError extends Error {
  constructor(readonly reason: 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'mismatch') {
    super(`webhook signature refused: ${reason}`);
    this.name = 'WebhookSignatureError';
  }
}

/** A request's headers: Node's `req.headers`, a fetch `Headers`, or a plain record. */
export type WebhookHeaders = WebHeaders | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The raw request body, exactly as received (before any JSON parsing). */
  payload: string | Uint8Array;
  /** The request's headers: `webhook-id`, `webhook-timestamp` and `webhook-signature`. */
  headers: WebhookHeaders;
  /** The webhook's `whsec_...` secret from POST /webhooks or its rotation. */
  secret: string;
  /** How far the signed time may be from now, either way (replays older than this are refused). */
  toleranceSeconds?: number;
  now?: Date;
  /**
   * Opt-in, for a sender that signs only with the legacy Petstore-Signature: until this instant such a
   * delivery is accepted too, provided its `webhook-id` and `Petstore-Event-Id` (at least one) name the
   * event its signed body holds. Unset (the default), it is refused.
   */
  legacyUntil?: Date;
}

const PREFIX = 'whsec_';
// As Buffer#toString('utf8') reads a Buffer: a leading BOM kept, bad bytes as U+FFFD.
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The HMAC key of webhook-signature: the bytes the base64 after `whsec_` encodes (a secret issued
 * before Standard Webhooks spells them in base64url, which Node's decoder takes too).
 */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

function headerOf(headers: WebhookHeaders | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as WebHeaders).get === 'function') return (headers as WebHeaders).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function hmac(key: Buffer | string, prefix: string, body: string | Uint8Array): Buffer {
  return createHmac('sha256', key).update(prefix).update(body).digest();
}

function checkTolerance(t: number, now: Date, toleranceSeconds: number): void {
  if (Math.abs(now.getTime() / 1000 - t) > toleranceSeconds)
    throw new WebhookSignatureError('timestamp_out_of_tolerance');
}

/** Any of the listed signatures (one per secret during a rotation) matches; compared in constant time. */
function anyMatches(given: Buffer[], expected: Buffer): boolean {
  return given.some((g) => g.length === expected.length && timingSafeEqual(g, expected));
}

/** The webhook-id the service gives a delivery of this body: the event's id, `test-<deliveryId>` for a test. */
function signedMessageId(event: WebhookPayload): string | undefined {
  if (typeof event.id === 'number') return String(event.id);
  const deliveryId = (event.data as { deliveryId?: unknown } | undefined)?.deliveryId;
  return event.type === 'webhook.test' && typeof deliveryId === 'number' ? `test-${deliveryId}` : undefined;
}

/**
 * Checks a delivery's Standard Webhooks signature (docs/receiving-webhooks.md) in constant time and
 * returns the parsed event; with `legacyUntil`, until then, a delivery with only the legacy
 * Petstore-Signature passes too. Throws WebhookSignatureError when the headers are missing,
 * malformed, too old or too new, or signed with another secret.
 */
export function verifyWebhook({
  payload,
  headers,
  secret,
  toleranceSeconds = 300,
  now = new Date(),
  legacyUntil,
}: VerifyWebhookOptions): WebhookPayload {
  const body = typeof payload === 'string' ? payload : UTF8.decode(payload);
  const signature = headerOf(headers, 'webhook-signature');
  if (signature !== undefined) {
    const id = headerOf(headers, 'webhook-id');
    const timestamp = headerOf(headers, 'webhook-timestamp');
    if (!id || !timestamp) throw new WebhookSignatureError('missing_header');
    const given = signature
      .split(' ')
      .map((s) => /^v1,([A-Za-z0-9+/]+={0,2})$/.exec(s)?.[1])
      .filter((s): s is string => s !== undefined)
      .map((s) => Buffer.from(s, 'base64'));
    if (!/^\d+$/.test(timestamp) || !given.length) throw new WebhookSignatureError('malformed_header');
    checkTolerance(Number(timestamp), now, toleranceSeconds);
    if (!anyMatches(given, hmac(standardKey(secret), `${id}.${timestamp}.`, payload)))
      throw new WebhookSignatureError('mismatch');
    return JSON.parse(body) as WebhookPayload;
  }
  const legacy = headerOf(headers, 'petstore-signature');
  // Off unless opted in; an invalid date refuses too.
  if (!legacy || !legacyUntil || !(now < legacyUntil)) throw new WebhookSignatureError('missing_header');
  const parts = legacy
    .split(',')
    .map((kv): [string, string] => [kv.slice(0, kv.indexOf('=')).trim(), kv.slice(kv.indexOf('=') + 1).trim()]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const given = parts.filter(([k]) => k === 'v1').map(([, v]) => v);
  if (!Number.isInteger(t) || !given.length || !given.every((v) => /^[0-9a-f]{64}$/.test(v)))
    throw new WebhookSignatureError('malformed_header');
  checkTolerance(t, now, toleranceSeconds);
  // hex HMAC-SHA256 keyed by the whole secret string, over "<t>.<raw body>".
  if (
    !anyMatches(
      given.map((v) => Buffer.from(v, 'hex')),
      hmac(secret, `${t}.`, payload),
    )
  )
    throw new WebhookSignatureError('mismatch');
  // The legacy HMAC leaves the ids out: receivers de-duplicate on them, so they must be the signed event's.
  const event = JSON.parse(body) as WebhookPayload;
  const ids = ['webhook-id', 'petstore-event-id']
    .map((name) => headerOf(headers, name))
    .filter((id) => id !== undefined);
  if (!ids.length) throw new WebhookSignatureError('missing_header');
  const signedId = signedMessageId(event);
  if (ids.some((id) => id !== signedId)) throw new WebhookSignatureError('mismatch');
  return event;
}
