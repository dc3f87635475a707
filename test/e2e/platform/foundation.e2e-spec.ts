import { cli } from '../../support/cli';
import { RunningApi, startApi, startApiWithAccount } from '../../support/test-apps';
import { HttpClient, eventually } from '../../support/http';
import { expectErrorBody, RATE_LIMIT_HEADERS } from '../../support/expect-error';

describe('foundation: error model, request ids, health, documents', () => {
  let api: RunningApi;
  let http: HttpClient;

  beforeAll(async () => {
    ({ api, http } = await startApiWithAccount());
  });
  afterAll(() => api.close());

  it('answers an unknown route with 404 not_found and the rate-limit headers', async () => {
    const res = await http.get('/v1/no-such-thing');
    expectErrorBody(res, 404, 'not_found');
    for (const h of RATE_LIMIT_HEADERS) expect(res.headers.get(h)).not.toBeNull();
  });

  it('answers invalid JSON with 400 invalid_json', async () => {
    const res = await http.request('POST', '/v1/keys', {
      rawBody: '{"name": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expectErrorBody(res, 400, 'invalid_json');
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
  });

  it('answers a body without Content-Type: application/json with 400 unsupported_media_type', async () => {
    const res = await http.request('POST', '/v1/keys', {
      rawBody: '{"name":"x"}',
      headers: { 'Content-Type': 'text/plain' },
    });
    expectErrorBody(res, 400, 'unsupported_media_type');
  });

  it('answers an oversize body with 413 payload_too_large', async () => {
    const res = await http.post('/v1/keys', { name: 'x'.repeat(api.config.bodyLimitBytes + 10) });
    expectErrorBody(res, 413, 'payload_too_large');
  });

  it('answers invalid fields with 400 validation_failed naming each field', async () => {
    const res = await http.post('/v1/keys', { name: '', scopes: ['root'], extra: 1 });
    expectErrorBody(res, 400, 'validation_failed');
    const fields = (res.body.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(expect.arrayContaining(['extra', 'name', 'scopes']));
  });

  it('answers a malformed path id with 400 invalid_parameter', async () => {
    const res = await http.delete('/v1/keys/abc');
    expectErrorBody(res, 400, 'invalid_parameter');
  });

  it('echoes a sane X-Request-Id and generates one otherwise', async () => {
    const echoed = await http.get('/v1/account', { headers: { 'X-Request-Id': 'req-123.abc' } });
    expect(echoed.headers.get('x-request-id')).toBe('req-123.abc');
    const generated = await http.get('/v1/account', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves liveness and readiness without a key', async () => {
    const anon = new HttpClient(api.url);
    expect((await anon.get('/health/live')).status).toBe(200);
    const ready = await anon.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ postgres: 'up', redis: 'up' });
  });

  it('serves Prometheus metrics on METRICS_PORT only, not on the public port', async () => {
    const metrics = await new HttpClient(api.metricsUrl).get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/petstore_http_request_duration_seconds_count\{[^}]*route="\/v1\/account"/);
    // Node's defaults under their standard names, as stock Node.js dashboards query them.
    expect(metrics.text).toMatch(/^process_start_time_seconds \d+$/m);
    expect(metrics.text).not.toMatch(/^petstore_process_/m);
    expect((await new HttpClient(api.url).get('/metrics')).status).toBe(401);
    expect((await http.get('/metrics')).status).toBe(404);
  });

  it('serves the OpenAPI 3.0.3 document at /openapi.json and /v1/openapi.json, and a docs page', async () => {
    const anon = new HttpClient(api.url);
    for (const path of ['/openapi.json', '/v1/openapi.json']) {
      const doc = await anon.get(path);
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toBe('3.0.3');
      expect(doc.body.info.version).toBe('1.0.0');
      expect(doc.body.components.securitySchemes.bearer).toEqual(
        expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      );
      expect(doc.body.tags.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['Pets', 'Store']));
    }
    const docs = await anon.get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('Pet Store API reference');
  });
});

describe('foundation: operator CLI', () => {
  it('account:create --json prints one JSON line with accountId and a working apiKey', async () => {
    const { stdout } = await cli(
      'account:create',
      '--name',
      'cli test',
      '--plan',
      'enterprise',
      '--limit-minute',
      '5000',
      '--limit-day',
      '90000',
      '--json',
    );
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]);
    expect(out).toEqual(
      expect.objectContaining({ accountId: expect.any(Number), apiKey: expect.stringMatching(/^pst_/) }),
    );
    const api = await startApi();
    try {
      const res = await eventually(async () => {
        const r = await new HttpClient(api.url, out.apiKey).get('/v1/account');
        return r.status === 200 ? r : null;
      });
      expect(res.body).toEqual(
        expect.objectContaining({ id: out.accountId, plan: 'enterprise', limits: { perMinute: 5000, perDay: 90000 } }),
      );
    } finally {
      await api.close();
    }
  });

  it('refuses an enterprise account without limits, naming the problem', async () => {
    await expect(cli('account:create', '--name', 'x', '--plan', 'enterprise', '--json')).rejects.toMatchObject({
      stderr: expect.stringContaining('limitPerMinute'),
    });
  });
});
