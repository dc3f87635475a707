import { readFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { connect } from 'node:net';
import { KEY_PREFIX } from '@app/access';
import { unissuedKey } from '../../support/keys';
import { rootLogger } from '@app/observability';
import { ROOMY_LIMITS, RunningApi, startApi, startApiWithAccount } from '../../support/test-apps';
import { contractFor } from '../../support/contract';
import { HttpClient, HttpResponse } from '../../support/http';

/** Secret-shaped text: our key prefix followed by key characters. */
const KEY_SHAPED = new RegExp(`${KEY_PREFIX}[0-9A-Za-z]{20,}`, 'g');

const INJECTIONS: unknown[] = [
  "' OR '1'='1",
  '1; DROP TABLE accounts; --',
  '1 UNION SELECT key_hash FROM api_keys',
  "1' AND pg_sleep(5)--",
  'a\u0000b',
  'a%00b',
  '../../../etc/passwd',
  '-1',
  '1.5',
  '1e309',
  '99999999999999999999',
  '$1',
  '{"$ne":null}',
  '<script>alert(1)</script>',
];
const TYPED_BODY_VALUES: unknown[] = [{ $ne: null }, ['x'], -1, 1e308, 2 ** 64, true, null];
const OVERSIZED = 'x'.repeat(20_000);

interface Operation {
  method: string;
  path: string;
  params: { name: string; in: 'path' | 'query'; schema: { type?: string; enum?: unknown[] } }[];
  bodyFields: Record<string, { type?: string; enum?: unknown[]; maxLength?: number }>;
}

/**
 * A request outside the contract check of HttpClient: for deliberately odd requests whose
 * answers no operation documents (an unknown route with a bad key, Node's own 431).
 */
async function raw(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string } = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined || opts.rawBody !== undefined) headers['Content-Type'] ??= 'application/json';
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text, text };
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'strict-transport-security': expect.stringMatching(/max-age=\d+/),
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

function expectSecurityHeaders(res: HttpResponse, label: string): void {
  const got = Object.fromEntries(Object.keys(SECURITY_HEADERS).map((h) => [h, res.headers.get(h)]));
  expect({ label, headers: got }).toEqual({ label, headers: SECURITY_HEADERS });
  expect({ label, poweredBy: res.headers.get('x-powered-by') }).toEqual({ label, poweredBy: null });
}

describe('security', () => {
  let api: RunningApi;
  let http: HttpClient;
  let apiKey: string;

  beforeAll(async () => {
    ({ api, apiKey, http } = await startApiWithAccount('enterprise', ROOMY_LIMITS));
  });
  afterAll(() => api.close());

  describe('no API key ever reaches a log line', () => {
    it('valid, unknown and misplaced keys in headers, query strings, paths, bodies and request ids', async () => {
      const unknownKey = unissuedKey();
      const send = (method: string, path: string, opts: Parameters<typeof raw>[3] = {}) =>
        raw(api.url, method, path, opts);
      const attempts: Promise<HttpResponse>[] = [];
      for (const key of [apiKey, unknownKey]) {
        attempts.push(
          send('GET', '/v1/account', { key }),
          send('GET', `/v1/account?api_key=${key}`),
          send('GET', `/v1/no-such-route?key=${key}`, { key }),
          send('GET', `/v1/keys/${key}`, { key }),
          send('DELETE', `/v1/keys/${key}`, { key }),
          send('GET', '/v1/account', { headers: { Authorization: `Bearer ${key} extra` } }),
          send('GET', '/v1/account', { headers: { Authorization: key } }),
          send('GET', '/v1/account', { key, headers: { 'X-Request-Id': key } }),
          send('GET', '/v1/account', { key, headers: { 'X-Api-Key': key, Cookie: `key=${key}` } }),
          send('POST', '/v1/keys', { key, body: { name: key, extra: key } }),
          send('POST', '/v1/keys', { key, body: { name: 'ok', scopes: [key] } }),
          send('POST', '/v1/keys', { key, rawBody: `{"name": ${key}` }),
          send('POST', '/v1/webhooks', { key, body: { url: `https://example.com/${key}`, events: [key] } }),
          send('POST', '/v1/pets', { key, body: { name: key, photoUrls: [key] } }),
        );
      }
      const answers = await Promise.all(attempts);
      expect(answers.map((a) => a.status).filter((s) => s >= 500)).toEqual([]);
      // A key echoed as a request id would land in every log line of that request.
      expect(answers.map((a) => a.headers.get('x-request-id') ?? '').filter((id) => id.includes(KEY_PREFIX))).toEqual(
        [],
      );

      await new Promise<void>((resolve, reject) =>
        rootLogger(api.config, 'api').flush((err) => (err ? reject(err) : resolve())),
      );
      const log = readFileSync(api.config.logFile as string, 'utf8');
      expect(log.length).toBeGreaterThan(0);
      expect(log).toContain('/v1/account');
      expect(log.match(KEY_SHAPED) ?? []).toEqual([]);
      expect(log).not.toContain('Bearer ');
      expect(log).not.toContain(apiKey.slice(KEY_PREFIX.length, KEY_PREFIX.length + 16));
    });
  });

  describe('hostile input in every parameter of every /v1 operation', () => {
    let operations: Operation[];

    beforeAll(async () => {
      const doc = (await http.get('/openapi.json')).body;
      operations = [];
      for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(item)) {
          if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
          const ref: string | undefined = op.requestBody?.content?.['application/json']?.schema?.$ref;
          const schema = ref ? doc.components.schemas[ref.split('/').pop() as string] : undefined;
          operations.push({
            method: method.toUpperCase(),
            path: `/v1${path}`,
            params: (op.parameters ?? []).filter((p: { in: string }) => p.in === 'path' || p.in === 'query'),
            bodyFields: schema?.properties ?? {},
          });
        }
      }
    });

    function url(op: Operation, target?: { name: string; value: string }): string {
      let path = op.path;
      const query = new URLSearchParams();
      for (const p of op.params) {
        if (p.in === 'path') {
          const value = p.name === target?.name ? target.value : '999999999';
          path = path.replace(`{${p.name}}`, encodeURIComponent(value));
        } else if (p.name === target?.name) query.set(p.name, target.value);
      }
      const qs = query.toString();
      return qs ? `${path}?${qs}` : path;
    }

    it('covers the operations the document declares', () => {
      expect(operations.length).toBeGreaterThanOrEqual(8);
      expect(operations.some((o) => o.params.some((p) => p.in === 'path'))).toBe(true);
      expect(operations.some((o) => o.params.some((p) => p.in === 'query'))).toBe(true);
      expect(operations.some((o) => Object.keys(o.bodyFields).length > 0)).toBe(true);
    });

    it('path and query parameters: 4xx for anything not of their type, never 5xx', async () => {
      const failures: string[] = [];
      for (const op of operations) {
        for (const p of op.params) {
          const freeText = p.schema.type === 'string' && !p.schema.enum;
          for (const value of [...INJECTIONS.map(String), OVERSIZED]) {
            const body = Object.keys(op.bodyFields).length ? {} : undefined;
            // Node itself answers an oversized URL (431), outside any operation's contract.
            const res =
              value === OVERSIZED
                ? await raw(api.url, op.method, url(op, { name: p.name, value }), { key: apiKey, body })
                : await http.request(op.method, url(op, { name: p.name, value }), { body });
            const ok = res.status >= 400 && res.status < 500;
            if (res.status >= 500 || (!freeText && !ok) || (value === OVERSIZED && !ok)) {
              failures.push(`${op.method} ${op.path} ${p.in}:${p.name}=${value.slice(0, 40)} -> ${res.status}`);
            }
          }
        }
      }
      expect(failures).toEqual([]);
    });

    it('body fields: 4xx for wrong types and oversized values, never 5xx', async () => {
      const failures: string[] = [];
      for (const op of operations) {
        for (const [field, schema] of Object.entries(op.bodyFields)) {
          const freeText = schema.type === 'string' && !schema.enum;
          for (const value of [...INJECTIONS, ...TYPED_BODY_VALUES, OVERSIZED]) {
            const res = await http.request(op.method, url(op), { body: { [field]: value } });
            const ok = res.status >= 400 && res.status < 500;
            const mayPass = freeText && typeof value === 'string' && value !== OVERSIZED;
            if (res.status >= 500 || (!mayPass && !ok)) {
              failures.push(
                `${op.method} ${op.path} body.${field}=${JSON.stringify(value).slice(0, 40)} -> ${res.status}`,
              );
            }
          }
        }
      }
      expect(failures).toEqual([]);
    });
  });

  describe('security headers (helmet) on every answer', () => {
    it('successes, client errors, and unauthenticated operations routes', async () => {
      const anon = new HttpClient(api.url);
      const answers: [string, HttpResponse][] = [
        ['200 /v1/account', await http.get('/v1/account')],
        ['401', await anon.get('/v1/account')],
        ['404', await http.get('/v1/no-such-thing')],
        [
          '400 invalid_json',
          await http.request('POST', '/v1/keys', { rawBody: '{', headers: { 'Content-Type': 'application/json' } }),
        ],
        ['413', await http.post('/v1/keys', { name: 'x'.repeat(api.config.bodyLimitBytes + 1) })],
        ['400 invalid_parameter', await http.delete('/v1/keys/abc')],
        ['health', await anon.get('/health/live')],
        ['openapi', await anon.get('/openapi.json')],
        ['docs', await anon.get('/docs')],
        // Its page sets no header of helmet's again: a second line would follow their block (fetch joins it ", ").
        ['console', await anon.get('/console/')],
      ];
      for (const [label, res] of answers) expectSecurityHeaders(res, label);
    });
  });

  describe('CORS', () => {
    const allowed = 'https://app.example.com';
    const other = 'https://evil.example.net';
    const preflight = (client: HttpClient, origin: string) =>
      client.request('OPTIONS', '/v1/account', {
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'authorization',
        },
      });

    it('is off by default: no Access-Control-Allow-Origin for any origin, preflight included', async () => {
      const simple = await http.get('/v1/account', { headers: { Origin: allowed } });
      expect(simple.status).toBe(200);
      expect(simple.headers.get('access-control-allow-origin')).toBeNull();
      const pre = await preflight(http, allowed);
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      expect(pre.headers.get('access-control-allow-methods')).toBeNull();
    });

    it('CORS_ORIGINS allows exactly the listed origins, preflight included', async () => {
      const corsApi = await startApi({ CORS_ORIGINS: `${allowed}, https://other-allowed.example.org` });
      try {
        const client = new HttpClient(corsApi.url, apiKey);
        const simple = await client.get('/v1/account', { headers: { Origin: allowed } });
        expect(simple.status).toBe(200);
        expect(simple.headers.get('access-control-allow-origin')).toBe(allowed);
        // Clients may read the rate-limit and request-id headers ('*': requests carry no cookies).
        expect(simple.headers.get('access-control-expose-headers')).toBe('*');
        const pre = await preflight(client, allowed);
        expect(pre.status).toBe(204);
        expect(pre.headers.get('access-control-allow-origin')).toBe(allowed);
        expect(pre.headers.get('access-control-allow-methods')).toMatch(/GET/);
        expect((pre.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('authorization');
        const foreign = await client.get('/v1/account', { headers: { Origin: other } });
        expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
        const foreignPre = await preflight(client, other);
        expect(foreignPre.headers.get('access-control-allow-origin')).toBeNull();
      } finally {
        await corsApi.close();
      }
    });
  });

  describe('keep-alive', () => {
    it("an idle connection outlives a proxy's 60 s upstream idle timeout: the server advertises Keep-Alive timeout=65", async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const header = await new Promise<string | undefined>((resolve, reject) => {
        const { port } = new URL(api.url);
        const req = get(
          { agent, host: '127.0.0.1', port, path: '/v1/account', headers: { Authorization: `Bearer ${apiKey}` } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.headers['keep-alive'] as string | undefined));
          },
        );
        req.on('error', reject);
      });
      agent.destroy();
      expect(header).toBe('timeout=65');
    });
  });

  describe('size limits', () => {
    /** An answer Node gives before the app sees the request, in the Error model all the same, as documented. */
    async function expectRefusedByNode(res: HttpResponse, code: string, status: number, path: string): Promise<void> {
      (await contractFor(api.url))!.assert({ method: 'GET', path, status, headers: res.headers, text: res.text });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(JSON.parse(res.text)).toEqual({ code, message: expect.any(String), status });
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }

    it('headers over 16 KB: 431 headers_too_large, and the server keeps serving', async () => {
      const res = await raw(api.url, 'GET', '/v1/account', { key: apiKey, headers: { 'X-Big': 'x'.repeat(20_000) } });
      await expectRefusedByNode(res, 'headers_too_large', 431, '/v1/account');
      expect((await http.get('/v1/account')).status).toBe(200);
    });

    it('a URL over 16 KB: 431 headers_too_large, never 5xx', async () => {
      const path = `/v1/events?type=${'x'.repeat(20_000)}`;
      const res = await raw(api.url, 'GET', path, { key: apiKey });
      await expectRefusedByNode(res, 'headers_too_large', 431, path);
    });

    it('bytes that are not HTTP: 400 malformed_request, and the connection is closed', async () => {
      const { port } = new URL(api.url);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.write('HELLO?\r\n\r\n'));
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('utf8')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      const [head, body] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8(\r\n|$)/);
      expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}(\r\n|$)/);
      expect(JSON.parse(body)).toEqual({ code: 'malformed_request', message: expect.any(String), status: 400 });
    });

    it(`a body over BODY_LIMIT_BYTES: 413 payload_too_large with the security headers`, async () => {
      const res = await http.post('/v1/keys', { name: 'x'.repeat(api.config.bodyLimitBytes) });
      expect(res.status).toBe(413);
      expect(res.body).toEqual(expect.objectContaining({ code: 'payload_too_large', status: 413 }));
      expectSecurityHeaders(res, '413');
    });
  });
});
