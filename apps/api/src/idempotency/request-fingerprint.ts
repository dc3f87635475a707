import { createHash } from 'node:crypto';
import { ApiError } from '@app/errors';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const KEY_PATTERN = new RegExp(`^[\\x20-\\x7E]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);

/** Undefined when absent; 400 invalid_parameter when malformed. */
export function readIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && KEY_PATTERN.test(value)) return value;
  const message = `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters, sent once`;
  throw new ApiError('invalid_parameter', `${IDEMPOTENCY_HEADER} ${message}`, [
    { field: `header.${IDEMPOTENCY_HEADER}`, message },
  ]);
}

/** Keys sorted at every level, so `{a,b}` and `{b,a}` are the same body. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${url}\n${canonicalJson(body)}`)
    .digest('hex');
}
