import { ApiError } from '@app/errors';
import { canonicalJson, readIdempotencyKey, requestFingerprint } from './request-fingerprint';

describe('request fingerprint', () => {
  it('ignores key order at every level but not array order or values', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    const f = (body: unknown) => requestFingerprint('POST', '/v1/messages', body);
    expect(f({ a: 1, b: 2 })).toBe(f({ b: 2, a: 1 }));
    expect(f({ a: [1, 2] })).not.toBe(f({ a: [2, 1] }));
    expect(f({ a: 1 })).not.toBe(f({ a: '1' }));
    expect(f(undefined)).not.toBe(f({}));
  });

  it('tells requests apart by method and path', () => {
    const body = { message: 'x' };
    expect(requestFingerprint('POST', '/v1/messages', body)).not.toBe(requestFingerprint('POST', '/v1/keys', body));
    expect(requestFingerprint('post', '/v1/keys', body)).toBe(requestFingerprint('POST', '/v1/keys', body));
    expect(requestFingerprint('POST', '/v1/keys', body)).not.toBe(requestFingerprint('PUT', '/v1/keys', body));
  });
});

describe('Idempotency-Key header', () => {
  it('accepts 1..255 printable ASCII characters and is optional', () => {
    expect(readIdempotencyKey(undefined)).toBeUndefined();
    expect(readIdempotencyKey('0b7f4a1e-3c55-4f0e-9c1d-7d2a0e5b8f11')).toBe('0b7f4a1e-3c55-4f0e-9c1d-7d2a0e5b8f11');
    expect(readIdempotencyKey('k'.repeat(255))).toHaveLength(255);
    expect(readIdempotencyKey('order 42 / retry')).toBe('order 42 / retry');
  });

  it.each([[''], ['k'.repeat(256)], ['tab\there'], ['caf\u00e9'], [['a', 'b']]])(
    'answers 400 invalid_parameter for %j',
    (value) => {
      let caught: unknown;
      try {
        readIdempotencyKey(value);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ApiError);
      expect((caught as ApiError).code).toBe('invalid_parameter');
      expect((caught as ApiError).details?.[0].field).toBe('header.Idempotency-Key');
    },
  );
});
