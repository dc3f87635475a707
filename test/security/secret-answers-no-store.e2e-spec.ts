import { RunningApi, startApiWithAccount } from '../support/test-apps';
import { HttpClient } from '../support/http';

/**
 * Answers that carry a key or a webhook secret say `Cache-Control: no-store`, so no browser or
 * intermediary keeps the secret on disk.
 */
describe('answers carrying a secret', () => {
  let api: RunningApi;
  let http: HttpClient;

  beforeAll(async () => {
    ({ api, http } = await startApiWithAccount());
  });
  afterAll(() => api?.close());

  it('POST /keys: no-store', async () => {
    const res = await http.post('/v1/keys', { name: 'cached?' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('POST /keys replayed for the same Idempotency-Key: no-store', async () => {
    const headers = { 'Idempotency-Key': `no-store-${Date.now()}` };
    await http.post('/v1/keys', { name: 'replayed' }, { headers });
    const replay = await http.post('/v1/keys', { name: 'replayed' }, { headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('cache-control')).toBe('no-store');
  });

  it('POST /keys/{id}/rotate: no-store', async () => {
    const created = await http.post('/v1/keys', { name: 'to rotate' });
    const res = await http.post(`/v1/keys/${created.body.id}/rotate`);
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('POST /webhooks: no-store', async () => {
    const res = await http.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['pet.created'] });
    expect(res.status).toBe(201);
    expect(res.body.secret).toEqual(expect.any(String));
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});
