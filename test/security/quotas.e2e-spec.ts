import { createAccount, RunningApi, startApi } from '../support/test-apps';
import { HttpClient } from '../support/http';
import { expectErrorBody } from '../support/expect-error';

/** The free plan's figures, as docs/keys-and-limits.md states them. */
const FREE = { keys: 10, webhooks: 10 };
const ENV = { ALLOW_PRIVATE_WEBHOOK_URLS: 'true' };
const HOOK = { url: 'http://127.0.0.1:9/hook', events: ['pet.created'] };

describe('quotas on keys and webhooks per plan', () => {
  let api: RunningApi;

  async function freeAccount(): Promise<HttpClient> {
    return new HttpClient(api.url, (await createAccount(api, 'free')).apiKey);
  }

  /** Creates until the account holds `count` (its first key counts), each answered 201. */
  async function fill(http: HttpClient, path: string, body: object, count: number, held = 0) {
    const ids: number[] = [];
    for (let i = held; i < count; i++) {
      const res = await http.post(path, body);
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    return ids;
  }

  beforeAll(async () => {
    api = await startApi(ENV);
  });
  afterAll(() => api.close());

  it('refuses a webhook beyond the plan quota with 422 quota_exceeded naming the limit', async () => {
    const http = await freeAccount();
    const limit = FREE.webhooks;
    await fill(http, '/v1/webhooks', HOOK, limit);
    const res = await http.post('/v1/webhooks', HOOK);
    expectErrorBody(res, 422, 'quota_exceeded');
    expect(res.body.details).toEqual([{ field: 'webhooks', message: `limit ${limit} on plan free` }]);
  });

  it('frees a place when a webhook is deleted', async () => {
    const http = await freeAccount();
    const [first] = await fill(http, '/v1/webhooks', HOOK, FREE.webhooks);
    expect((await http.post('/v1/webhooks', HOOK)).status).toBe(422);
    expect((await http.delete(`/v1/webhooks/${first}`)).status).toBe(204);
    expect((await http.post('/v1/webhooks', HOOK)).status).toBe(201);
  });

  it('refuses a key beyond the plan quota with 422 quota_exceeded naming the limit', async () => {
    const http = await freeAccount();
    const limit = FREE.keys;
    await fill(http, '/v1/keys', { name: 'k' }, limit, 1);
    const res = await http.post('/v1/keys', { name: 'one too many' });
    expectErrorBody(res, 422, 'quota_exceeded');
    expect(res.body.details).toEqual([{ field: 'keys', message: `limit ${limit} on plan free` }]);
  });

  it('frees a place when a key is revoked', async () => {
    const http = await freeAccount();
    const [first] = await fill(http, '/v1/keys', { name: 'k' }, FREE.keys, 1);
    expect((await http.post('/v1/keys', { name: 'one too many' })).status).toBe(422);
    expect((await http.delete(`/v1/keys/${first}`)).status).toBe(204);
    expect((await http.post('/v1/keys', { name: 'replacement' })).status).toBe(201);
  });

  it('gives the last place to exactly one of several concurrent creates', async () => {
    const http = await freeAccount();
    await fill(http, '/v1/webhooks', HOOK, FREE.webhooks - 1);
    const answers = await Promise.all(Array.from({ length: 5 }, () => http.post('/v1/webhooks', HOOK)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 422, 422, 422, 422]);
    expect((await http.get('/v1/webhooks')).body).toHaveLength(FREE.webhooks);
  });
});
