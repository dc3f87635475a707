import { DataSource } from 'typeorm';
import {
  ApiKeysService,
  displayPrefix,
  generateLegacyApiKey,
  hashApiKey,
  keyFormat,
  LegacyKeyPrefixes,
} from '@app/access';
import { Scope } from '@app/access';
import { preparedQuery, sql } from '@app/database';
import { REDIS, RedisClient } from '@app/redis';
import { expectErrorBody } from '../support/expect-error';
import { HttpClient } from '../support/http';
import { forgedLegacyKey, keyLookups, unissuedKey } from '../support/keys';
import { TestClock } from '../support/test-clock';
import { closeAll, createAccount, RunningApi, startApi } from '../support/test-apps';

/**
 * A genuine key is judged by its account's plan from its first request, on every replica and
 * after a restart; only requests without one spend (and can get banned on) their address.
 */
describe('the front door', () => {
  let api: RunningApi;
  let other: RunningApi | undefined;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => closeAll([() => other?.close(), () => api?.close()]));

  it('two replicas, one restarted mid-run: 100 new keys from one address all get 200 on their first requests', async () => {
    other = await startApi();
    const keys = api.app.get(ApiKeysService);
    const secrets: string[] = [];
    for (let a = 0; a < 4; a++) {
      const { accountId } = await createAccount(api, 'business');
      for (let k = 0; k < 25; k++) secrets.push((await keys.create(accountId, { name: `k${k}` })).secret);
    }
    const address = new HttpClient(api.url).clientIp;
    const statuses: number[] = [];
    for (const [i, secret] of secrets.entries()) {
      if (i === 50) {
        await other.close();
        other = await startApi();
      }
      const replica = i % 2 ? other : api;
      const res = await new HttpClient(replica.url, secret).get('/v1/pets', {
        headers: { 'X-Forwarded-For': address },
      });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });

  it('admits a burst of 200 on a brand-new enterprise key', async () => {
    const { apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    const client = new HttpClient(api.url, apiKey);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => client.post('/v1/messages', { message: `burst ${i}` })),
    );
    expect(answers.filter((r) => r.status !== 202).map((r) => r.status)).toEqual([]);
  });

  it('asks Postgres once for concurrent first requests of a key no cache holds', async () => {
    const { apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    const fresh = await startApi();
    try {
      // Not shared either: as if issued before the replicas shared what they verified.
      await fresh.app.get<RedisClient>(REDIS).del(`${fresh.config.redisNamespace}:auth:key:${hashApiKey(apiKey)}`);
      const before = await keyLookups(fresh, 'postgres');
      const client = new HttpClient(fresh.url, apiKey);
      const answers = await Promise.all(Array.from({ length: 50 }, () => client.get('/v1/account')));
      expect(answers.every((r) => r.status === 200)).toBe(true);
      expect((await keyLookups(fresh, 'postgres')) - before).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it('does not refuse a genuine new key from an address banned for keyless abuse', async () => {
    const anonymous = new HttpClient(api.url);
    // Refused requests count as strikes from a second after the first 429 on.
    let banned = false;
    for (const deadline = Date.now() + 20_000; !banned && Date.now() < deadline;) {
      banned = (await anonymous.get('/v1/pets')).body?.code === 'api_key_banned';
    }
    expect(banned).toBe(true);
    const { apiKey } = await createAccount(api);
    const res = await anonymous.get('/v1/pets', { key: apiKey });
    expect(res.status).toBe(200);
  });

  it('answers 503 with Retry-After: 1 beyond the lookup budget, and never counts it as a strike', async () => {
    const tight = await startApi({ AUTH_LOOKUP_CONCURRENCY: '1', AUTH_LOOKUP_RATE: '1' });
    try {
      const client = new HttpClient(tight.url);
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => client.get('/v1/pets', { key: unissuedKey() })),
      );
      const refused = answers.filter((r) => r.status === 503);
      expect(refused.length).toBeGreaterThan(0);
      for (const res of refused) {
        expectErrorBody(res, 503, 'service_unavailable');
        expect(res.headers.get('retry-after')).toBe('1');
      }
      // Not one of them spent the address's budget: the 401s are the few lookups that ran.
      expect(answers.filter((r) => r.status === 429)).toEqual([]);
      const { apiKey } = await createAccount(tight);
      expect((await client.get('/v1/pets', { key: apiKey })).status).toBe(200);
    } finally {
      await tight.close();
    }
  });

  describe('scopes', () => {
    const keyWith = async (scopes: Scope[]) => {
      const { accountId } = await createAccount(api);
      return (await api.app.get(ApiKeysService).create(accountId, { name: scopes.join('+'), scopes })).secret;
    };

    it('refuses tenant data to a key with admin alone, 403 insufficient_scope', async () => {
      const admin = new HttpClient(api.url, await keyWith(['admin']));
      for (const path of [
        '/v1/pets',
        '/v1/categories',
        '/v1/store/orders',
        '/v1/messages',
        '/v1/events',
        '/v1/webhooks',
      ]) {
        expectErrorBody(await admin.get(path), 403, 'insufficient_scope');
      }
    });

    it('lets a key with admin alone reach /account, /keys, /rate_limit and /usage', async () => {
      const admin = new HttpClient(api.url, await keyWith(['admin']));
      for (const path of ['/v1/account', '/v1/keys', '/v1/rate_limit', '/v1/usage']) {
        expect([path, (await admin.get(path)).status]).toEqual([path, 200]);
      }
    });

    it('lets write imply read', async () => {
      expect((await new HttpClient(api.url, await keyWith(['write'])).get('/v1/pets')).status).toBe(200);
    });
  });

  describe('metering of the account routes', () => {
    let clocked: RunningApi;
    const clock = new TestClock();

    beforeAll(async () => {
      clock.set(Date.UTC(2030, 0, 1, 12, 0, 5));
      clocked = await startApi({}, { clock });
    });
    afterAll(() => clocked?.close());

    it('counts GET /usage against a budget of its own per key: 30 a minute, then 429', async () => {
      const { apiKey } = await createAccount(clocked, 'free');
      const client = new HttpClient(clocked.url, apiKey);
      const statuses = [];
      for (let i = 0; i < 31; i++) statuses.push((await client.get('/v1/usage')).status);
      expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
      const refused = await client.get('/v1/usage');
      expectErrorBody(refused, 429, 'rate_limit_exceeded');
      expect(refused.headers.get('retry-after')).not.toBeNull();
      // The account's own budget was not spent by them.
      expect((await client.get('/v1/rate_limit')).body.minute.used).toBe(0);
    });

    it('limits GET /rate_limit per key (120 a minute) without spending the account budget', async () => {
      const { apiKey } = await createAccount(clocked, 'free');
      const client = new HttpClient(clocked.url, apiKey);
      for (let i = 0; i < 120; i++) expect((await client.get('/v1/rate_limit')).status).toBe(200);
      expectErrorBody(await client.get('/v1/rate_limit'), 429, 'rate_limit_exceeded');
      expect((await client.get('/v1/account')).headers.get('x-ratelimit-remaining')).toBe('59');
    });
  });

  describe('keys issued before tags', () => {
    let legacy: string;
    let accountId: number;

    beforeAll(async () => {
      ({ accountId } = await createAccount(api));
      legacy = generateLegacyApiKey();
      await preparedQuery(
        api.app.get(DataSource),
        sql`INSERT INTO api_keys (account_id, name, prefix, key_hash, scopes)
            VALUES (${accountId}, 'old', ${displayPrefix(legacy)}, ${hashApiKey(legacy)}, ${['read', 'write', 'admin']})`,
      );
      await api.app.get(LegacyKeyPrefixes).reload();
    });

    it('keep working, and count as old-format keys left', async () => {
      expect((await new HttpClient(api.url, legacy).get('/v1/account')).status).toBe(200);
      expect(await api.app.get(ApiKeysService).countLegacy()).toBe(1);
    });

    it('are refused without Postgres when forged (no live old key has the prefix)', async () => {
      const before = await keyLookups(api, 'shape');
      const res = await new HttpClient(api.url).get('/v1/account', { key: forgedLegacyKey() });
      expectErrorBody(res, 401, 'invalid_api_key');
      expect((await keyLookups(api, 'shape')) - before).toBe(1);
    });

    it('move to the tagged format when rotated', async () => {
      const old = (await api.app.get(ApiKeysService).list(accountId)).find((k) => k.prefix === displayPrefix(legacy))!;
      const rotated = await new HttpClient(api.url, legacy).post(`/v1/keys/${old.id}/rotate`, {
        gracePeriodSeconds: 0,
      });
      expect(rotated.status).toBe(201);
      expect(keyFormat(rotated.body.secret)).toBe('tagged');
      expect(await api.app.get(ApiKeysService).countLegacy()).toBe(0);
      expect((await new HttpClient(api.url, rotated.body.secret).get('/v1/account')).status).toBe(200);
    });
  });

  it('knows a key made over the API on every replica at once, without asking Postgres', async () => {
    const { apiKey } = await createAccount(api);
    const made = await new HttpClient(api.url, apiKey).post('/v1/keys', { name: 'second', scopes: ['read'] });
    other ??= await startApi();
    const before = await keyLookups(other, 'postgres');
    expect((await new HttpClient(other.url, made.body.secret).get('/v1/pets')).status).toBe(200);
    expect((await keyLookups(other, 'postgres')) - before).toBe(0);
  });
});
