import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import { KEY_PREFIX } from '@app/access';
import { unissuedKey } from '../support/keys';
import { accessLog } from '@app/observability';

/**
 * A key sent as X-Request-Id is neither echoed nor logged, and a percent-encoded `pst%5F...` in
 * a path is redacted from the access log like a plain one.
 */
function logged(url: string, headers: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ base: undefined }, { write: (s: string) => lines.push(JSON.parse(s)) });
  const req = Object.assign(new EventEmitter(), { url, method: 'GET', headers }) as unknown as IncomingMessage;
  const res = Object.assign(new EventEmitter(), {
    statusCode: 200,
    writableFinished: true,
  }) as unknown as ServerResponse;
  const requestId = accessLog(logger)(req, res, undefined);
  res.emit('close');
  return { line: lines[0], requestId };
}

const key = unissuedKey();
const secretPart = key.slice(KEY_PREFIX.length);

describe('X-Request-Id', () => {
  it.each([
    ['the secret part of a key', secretPart],
    ['a key in upper case', key.toUpperCase()],
    ['a key with its prefix spelled differently', `pst-${secretPart}`],
    ['an id longer than 64 characters', 'a'.repeat(65)],
    ['an id with characters outside [A-Za-z0-9._-]', 'id with spaces'],
  ])('is replaced when it is %s', (_what, given) => {
    const { line, requestId } = logged('/v1/account', { 'x-request-id': given });
    expect(requestId).not.toBe(given);
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(line)).not.toContain(secretPart.slice(0, 16));
  });

  it.each(['req-42', '7f0c3a52-1f7e-4a0b-9d39-0d8a4c2f5e11', '4bf92f3577b34da6a3ce929d0e0e4736', 'a.b_c-d'])(
    'is kept when it is safe: %s',
    (given) => {
      expect(logged('/v1/account', { 'x-request-id': given }).requestId).toBe(given);
    },
  );
});

describe('paths in the access log', () => {
  it.each([
    ['percent-encoded underscore', `/v1/keys/pst%5F${secretPart}`],
    ['percent-encoded prefix', `/v1/keys/%70%73%74%5f${secretPart}`],
    ['upper-case prefix', `/v1/keys/PST_${secretPart}`],
    ['plain key', `/v1/keys/${key}`],
  ])('carry no key: %s', (_what, url) => {
    const { line } = logged(url);
    expect(line.path).toMatch(/^\/v1\/keys\//);
    expect(JSON.stringify(line)).not.toContain(secretPart.slice(0, 16));
  });

  it('keep a path that does not decode as it was sent', () => {
    expect(logged('/v1/pets/%E0%A4%A').line.path).toBe('/v1/pets/%E0%A4%A');
  });
});
