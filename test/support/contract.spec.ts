import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContractValidator, ContractViolation, ObservedResponse } from './contract';

const document = JSON.parse(readFileSync(join(__dirname, '../../openapi.json'), 'utf8'));

const RATE_LIMIT = {
  'X-RateLimit-Limit': '1000',
  'X-RateLimit-Remaining': '999',
  'X-RateLimit-Reset': '1767225600',
  'X-RateLimit-Used': '1',
  'X-RateLimit-Resource': 'minute',
  'RateLimit-Policy': '"minute";q=1000;w=60, "day";q=100000;w=86400',
  RateLimit: '"minute";r=999;t=30',
  'X-Request-Id': 'req-1',
};

function answer(
  method: string,
  path: string,
  status: number,
  body: unknown,
  headers: Record<string, string | null> = {},
): ObservedResponse {
  const all = new Headers();
  for (const [k, v] of Object.entries({ ...RATE_LIMIT, ...headers })) if (v !== null) all.set(k, v);
  if (body !== undefined) all.set('Content-Type', 'application/json; charset=utf-8');
  return { method, path, status, headers: all, text: body === undefined ? '' : JSON.stringify(body) };
}

/** The same, with the request that was sent (a JSON body when given). */
function exchange(
  method: string,
  path: string,
  sent: unknown,
  status: number,
  body: unknown,
  headers: Record<string, string | null> = {},
): ObservedResponse {
  const request = new Headers({ Authorization: 'Bearer k' });
  if (sent !== undefined) request.set('Content-Type', 'application/json');
  return {
    ...answer(method, path, status, body, headers),
    request: { headers: request, body: sent === undefined ? undefined : JSON.stringify(sent) },
  };
}

const key = {
  id: 7,
  name: 'ci',
  prefix: 'pst_abc',
  scopes: ['read', 'write'],
  expiresAt: null,
  rotatedOutAt: null,
  lastUsedAt: '2026-01-01T00:00:00.000Z',
  createdAt: '2026-01-01T00:00:00.000Z',
};
const notFound = { code: 'not_found', message: 'No such route', status: 404 };

describe('ContractValidator', () => {
  const contract = new ContractValidator(document);

  it('accepts answers that keep the contract (nullable fields, templated paths, documented errors)', () => {
    expect(contract.check(answer('GET', '/v1/keys', 200, [key]))).toEqual([]);
    expect(contract.check(answer('POST', '/v1/keys', 201, { ...key, secret: 's' }))).toEqual([]);
    expect(contract.check(answer('DELETE', '/v1/keys/7', 204, undefined))).toEqual([]);
    expect(contract.check(answer('DELETE', '/v1/keys/123456', 404, notFound))).toEqual([]);
    expect(
      contract.check(
        answer(
          'GET',
          '/v1/keys',
          429,
          { ...notFound, code: 'rate_limit_exceeded', status: 429 },
          { 'Retry-After': '3' },
        ),
      ),
    ).toEqual([]);
  });

  it('catches a status the operation does not document', () => {
    const violations = contract.check(answer('GET', '/v1/keys', 202, [key]));
    expect(violations).toEqual([expect.stringContaining('status 202 is not documented')]);
    expect(
      contract.check(answer('GET', '/v1/account', 409, { ...notFound, code: 'category_in_use', status: 409 })),
    ).toEqual([expect.stringContaining('status 409 is not documented')]);
  });

  it('catches a body of the wrong shape: missing field, wrong type, bad format, undeclared field, non-null', () => {
    const missing: Partial<typeof key> = { ...key };
    delete missing.prefix;
    expect(contract.check(answer('GET', '/v1/keys', 200, [missing]))).toEqual([
      expect.stringContaining("must have required property 'prefix'"),
    ]);
    expect(contract.check(answer('GET', '/v1/keys', 200, [{ ...key, id: '7' }]))).toEqual([
      expect.stringContaining('/0/id must be integer'),
    ]);
    expect(contract.check(answer('GET', '/v1/keys', 200, [{ ...key, createdAt: 'yesterday' }]))).toEqual([
      expect.stringContaining('must match format "date-time"'),
    ]);
    expect(contract.check(answer('GET', '/v1/keys', 200, [{ ...key, secret: 'leak' }]))).toEqual([
      expect.stringContaining('"secret" is not documented'),
    ]);
    expect(contract.check(answer('POST', '/v1/keys', 201, { ...key, secret: null }))).not.toEqual([]);
    expect(contract.check(answer('GET', '/v1/keys', 400, { code: 'nope', message: 'x', status: 400 }))).not.toEqual([]);
  });

  it('catches a missing or malformed declared header, and Retry-After missing on a 429', () => {
    expect(contract.check(answer('GET', '/v1/keys', 200, [key], { 'X-RateLimit-Remaining': null }))).toEqual([
      'required header X-RateLimit-Remaining is missing',
    ]);
    expect(contract.check(answer('GET', '/v1/keys', 200, [key], { 'X-RateLimit-Reset': 'soon' }))).toEqual([
      expect.stringContaining('header X-RateLimit-Reset="soon"'),
    ]);
    expect(
      contract.check(answer('GET', '/v1/keys', 429, { ...notFound, code: 'rate_limit_exceeded', status: 429 })),
    ).toEqual(['required header Retry-After is missing']);
  });

  it('catches a body where none is documented, and a non-JSON body where JSON is', () => {
    expect(contract.check(answer('DELETE', '/v1/keys/7', 204, { ok: true }))).toEqual([
      expect.stringContaining('none is documented'),
    ]);
    const html = answer('GET', '/v1/keys', 200, undefined);
    html.headers.set('Content-Type', 'text/html');
    html.text = '<p>hi</p>';
    expect(contract.check(html)).toEqual([expect.stringContaining('content-type "text/html"')]);
  });

  it('requires a documented 404 for a /v1 path no operation matches, and skips what the document does not cover', () => {
    expect(contract.check(answer('GET', '/v1/no-such-thing?x=1', 404, notFound))).toEqual([]);
    expect(contract.check(answer('GET', '/v1/no-such-thing', 200, { hello: 1 }))).toEqual([
      expect.stringContaining('must be a documented 404'),
    ]);
    expect(contract.check(answer('GET', '/v1/no-such-thing', 404, { error: 'nope' }))).not.toEqual([]);
    expect(contract.check(answer('GET', '/health/ready', 503, { anything: true }))).toEqual([]);
    expect(contract.check(answer('GET', '/v1/openapi.json', 200, { openapi: '3.0.3' }))).toEqual([]);
  });

  it('requires 405 method_not_allowed with Allow naming the documented methods on a documented path', () => {
    const refused = { code: 'method_not_allowed', message: 'PUT is not allowed', status: 405 };
    expect(contract.check(answer('PUT', '/v1/keys', 405, refused, { Allow: 'GET, POST, HEAD' }))).toEqual([]);
    expect(contract.check(answer('PUT', '/v1/keys', 404, notFound))).toEqual([
      expect.stringContaining('must be 405, not 404'),
    ]);
    expect(contract.check(answer('PUT', '/v1/keys', 405, refused, { Allow: 'GET' }))).toEqual([
      expect.stringContaining('must name the documented methods'),
    ]);
  });

  it('catches a meaningful header the answer sends but its response does not declare', () => {
    expect(contract.check(answer('GET', '/v1/keys', 200, [key], { Location: '/v1/keys/7' }))).toEqual([
      'header Location is sent but not declared for this answer',
    ]);
  });

  it('reads nullable as OAS 3.0.3 does: beside allOf of a model it does not admit null', () => {
    const doc = structuredClone(document);
    doc.components.schemas.ApiKey.properties.expiresAt = {
      nullable: true,
      type: 'object',
      allOf: [{ $ref: '#/components/schemas/Error' }],
    };
    expect(new ContractValidator(doc).check(answer('GET', '/v1/keys', 200, [key]))).toEqual([
      expect.stringContaining('/0/expiresAt'),
    ]);
  });

  it('catches a request the document refuses that was answered with success (null for a non-nullable field)', () => {
    const category = { id: 3, name: 'Dogs' };
    const etag = { ETag: '"x"' };
    expect(contract.check(exchange('PATCH', '/v1/categories/3', { name: 'Cats' }, 200, category, etag))).toEqual([]);
    expect(contract.check(exchange('PATCH', '/v1/categories/3', { description: null }, 200, category, etag))).toEqual(
      [],
    );
    expect(contract.check(exchange('PATCH', '/v1/categories/3', { name: null }, 200, category, etag))).toEqual([
      expect.stringMatching(/the request breaks the document \(body\/name must be string.*\) yet was answered 200/),
    ]);
    const invalid = { code: 'validation_failed', message: 'name must be a string', status: 400 };
    expect(contract.check(exchange('PATCH', '/v1/categories/3', { name: null }, 400, invalid))).toEqual([]);
  });

  it('catches valid parameters refused as invalid_parameter, and invalid ones accepted', () => {
    const invalid = { code: 'invalid_parameter', message: 'categoryId must be a positive integer', status: 400 };
    const huge = String(Number.MAX_SAFE_INTEGER + 1);
    expect(contract.check(exchange('DELETE', `/v1/keys/${huge}`, undefined, 400, invalid))).toEqual([]);
    expect(contract.check(exchange('DELETE', '/v1/keys/7', undefined, 400, invalid))).toEqual([
      'parameters the document calls valid were refused with invalid_parameter',
    ]);
    expect(contract.check(exchange('DELETE', '/v1/keys/0x7', undefined, 204, undefined))).toEqual([
      expect.stringContaining('path parameter keyId="0x7"'),
    ]);
  });

  it('assert() throws a ContractViolation naming the request and what broke', () => {
    expect(() => contract.assert(answer('GET', '/v1/keys', 200, [key]))).not.toThrow();
    expect(() => contract.assert(answer('GET', '/v1/keys', 418, [key]))).toThrow(ContractViolation);
    expect(() => contract.assert(answer('GET', '/v1/keys', 418, [key]))).toThrow(/GET \/v1\/keys answered 418/);
  });
});
