import { HttpClient } from '../../support/http';
import { createAccount, RunningApi, startApi, startApiWithAccount } from '../../support/test-apps';
import { TcpProxy } from '../../support/tcp-proxy';

/** Edge cases where the service must answer as its OpenAPI document says. */
describe('answers as the document says at its edges', () => {
  let api: RunningApi;
  let http: HttpClient;

  beforeAll(async () => {
    ({ api, http } = await startApiWithAccount());
  });
  afterAll(() => api.close());

  it('refuses path ids that only Number() would read (hex, exponent, blanks) with 400 invalid_parameter', async () => {
    const { body: key } = await http.post('/v1/keys', { name: 'target' });
    for (const id of [`0x${key.id.toString(16)}`, `${key.id}e0`, `%20${key.id}`]) {
      const res = await http.delete(`/v1/keys/${id}`);
      expect([res.status, res.body.code]).toEqual([400, 'invalid_parameter']);
    }
    expect((await http.get('/v1/keys')).body.map((k: { id: number }) => k.id)).toContain(key.id);
  });

  it('refuses a NUL character in a body string (400 validation_failed) and in the URL (400 invalid_parameter)', async () => {
    const body = await http.post('/v1/keys', { name: 'a\u0000b' });
    expect([body.status, body.body.code]).toEqual([400, 'validation_failed']);
    expect(body.body.details).toEqual([{ field: 'name', message: 'must not contain the NUL character' }]);
    const query = await http.get('/v1/keys?name=%00');
    expect([query.status, query.body.code]).toEqual([400, 'invalid_parameter']);
  });

  it('takes a date-time field only as an RFC 3339 string, not a number or a bare year', async () => {
    for (const expiresAt of [Date.now() + 86_400_000, '2099', true]) {
      const res = await http.post('/v1/keys', { name: 'dated', expiresAt });
      expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
    }
    const ok = await http.post('/v1/keys', { name: 'dated', expiresAt: '2099-01-01T00:00:00+02:00' });
    expect(ok.status).toBe(201);
    expect(ok.body.expiresAt).toBe('2098-12-31T22:00:00.000Z');
  });

  it('answers 503 with the rate-limit headers and Retry-After when a key cannot be checked (Postgres unreachable)', async () => {
    const proxy = await TcpProxy.inFrontOf(api.config.databaseUrl);
    const broken = await startApi({ DATABASE_URL: proxy.url });
    try {
      const { apiKey } = await createAccount(api);
      await proxy.stop();
      // HttpClient's contract check fails this call if a required header is missing.
      const res = await new HttpClient(broken.url, apiKey).get('/v1/account');
      expect([res.status, res.body.code]).toEqual([503, 'service_unavailable']);
      expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await broken.close();
      await proxy.stop();
    }
  });

  it('refuses null for an optional field the document does not let be null (400 validation_failed)', async () => {
    const { body: category } = await http.post('/v1/categories', { name: `nullable-${Date.now()}`, description: 'd' });
    const res = await http.patch(`/v1/categories/${category.id}`, { name: null });
    expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
    expect(res.body.details).toEqual(expect.arrayContaining([{ field: 'name', message: 'name must not be null' }]));
  });

  it('takes null where the document says nullable (a category description is removed)', async () => {
    const { body: category } = await http.post('/v1/categories', { name: `cleared-${Date.now()}`, description: 'd' });
    const res = await http.patch(`/v1/categories/${category.id}`, { description: null });
    expect(res.status).toBe(200);
    expect(res.body.description).toBeUndefined();
  });

  it('answers 405 method_not_allowed with Allow for a method a documented path does not list', async () => {
    const res = await http.put('/v1/keys', { name: 'x' });
    expect([res.status, res.body.code]).toEqual([405, 'method_not_allowed']);
    expect(res.headers.get('allow')).toBe('GET, POST, HEAD');
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
    const item = await http.post('/v1/pets/1');
    expect([item.status, item.headers.get('allow')]).toEqual([405, 'GET, DELETE, PATCH, HEAD']);
  });

  it('still answers 404 not_found for a path the document does not name', async () => {
    const res = await http.put('/v1/no-such-thing');
    expect([res.status, res.body.code]).toEqual([404, 'not_found']);
  });

  it('answers result: null for a queued message, which the document admits', async () => {
    const { body: accepted } = await http.post('/v1/messages', { message: 'not processed: no worker here' });
    // HttpClient's contract check (OAS 3.0.3 nullable read strictly) fails this call if null is not admitted.
    const res = await http.get(`/v1/messages/${accepted.id}`);
    expect([res.status, res.body.status, res.body.result]).toEqual([200, 'queued', null]);
  });
});
