import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpClient } from '../../support/http';
import { RunningApi, startApiWithAccount } from '../../support/test-apps';
import { typedClient } from '../../support/typed-client';

describe('typed client: every operation through openapi-fetch and the generated types', () => {
  let api: RunningApi;
  let client: ReturnType<typeof typedClient>;

  beforeAll(async () => {
    let http: HttpClient;
    ({ api, http } = await startApiWithAccount('pro'));
    client = typedClient(http);
  });
  afterAll(() => api.close());

  it('the API serves exactly the committed openapi.json the types come from (else: npm run openapi)', async () => {
    const served = await new HttpClient(api.url).get('/openapi.json');
    expect(served.body).toEqual(JSON.parse(readFileSync(join(__dirname, '../../../openapi.json'), 'utf8')));
  });

  it('getAccount: the account and its plan limits', async () => {
    const { data, response } = await client.GET('/account');
    expect(response.status).toBe(200);
    expect(data!.plan).toBe('pro');
    const perMinute: number = data!.limits.perMinute;
    expect(perMinute).toBe(300);
  });

  it('getRateLimit: both windows, not banned', async () => {
    const { data } = await client.GET('/rate_limit');
    expect(data!.minute.name).toBe('minute');
    expect(data!.day.limit).toBe(10_000);
    expect(data!.banned).toBe(false);
    expect(data!.banSecondsLeft).toBeNull();
  });

  it('createApiKey, listApiKeys, rotateApiKey, revokeApiKey', async () => {
    const created = await client.POST('/keys', { body: { name: 'typed', scopes: ['read'] } });
    expect(created.response.status).toBe(201);
    const key = created.data!;
    expect(key.secret).toMatch(/^pst_/);
    expect(key.scopes).toEqual(['read']);

    const listed = await client.GET('/keys');
    expect(listed.data!.map((k) => k.id)).toContain(key.id);
    expect(listed.data!.every((k) => !('secret' in k))).toBe(true);

    const rotated = await client.POST('/keys/{keyId}/rotate', {
      params: { path: { keyId: key.id } },
      body: { gracePeriodSeconds: 0 },
    });
    expect(rotated.response.status).toBe(201);
    expect(rotated.data!.secret).not.toBe(key.secret);

    const revoked = await client.DELETE('/keys/{keyId}', { params: { path: { keyId: rotated.data!.id } } });
    expect(revoked.response.status).toBe(204);
    const again = await client.DELETE('/keys/{keyId}', { params: { path: { keyId: rotated.data!.id } } });
    expect(again.response.status).toBe(404);
    expect(again.error!.code).toBe('not_found');
  });

  it('types the Error model and refuses, at compile time, a body the document does not allow', async () => {
    // @ts-expect-error `nme` is not a field of NewApiKey: the generated types reject it.
    const { error, response } = await client.POST('/keys', { body: { nme: 'typo' } });
    expect(response.status).toBe(400);
    expect(error!.code).toBe('validation_failed');
    expect(error!.status).toBe(400);
  });
});
