import { readFile } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { ApiKeysService, KEY_PATTERN } from '@app/access';
import { unissuedKey } from '../../support/keys';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';
import { eventually, HttpClient } from '../../support/http';
import { expectErrorBody, expectRateLimitHeaders } from '../../support/expect-error';
import { TcpProxy } from '../../support/tcp-proxy';
import { cli, cliProcess } from '../../support/cli';

/** Every secret this file sees, to prove none of them reaches the log. */
const secrets: string[] = [];
const keep = <T extends { secret?: string; apiKey?: string }>(k: T): T => {
  secrets.push((k.secret ?? k.apiKey) as string);
  return k;
};

/** Polls a request until it answers `status`; returns the time it took. */
async function msUntil(status: number, send: () => Promise<{ status: number }>): Promise<number> {
  const started = Date.now();
  await eventually(async () => (await send()).status === status, 5_000, 20);
  return Date.now() - started;
}

describe('API keys, scopes and tenancy', () => {
  let api: RunningApi;
  let api2: RunningApi;
  let a: HttpClient;
  let account: { accountId: number; apiKey: string; keyId: number };

  beforeAll(async () => {
    [api, api2] = await Promise.all([startApi(), startApi()]);
    account = keep(await createAccount(api, 'pro'));
    a = new HttpClient(api.url, account.apiKey);
  });
  afterAll(async () => {
    await Promise.all([api?.close(), api2?.close()]);
  });

  describe('authentication errors (401) and scope (403), each with the rate-limit headers', () => {
    it('missing_api_key without an Authorization header', async () => {
      const res = await new HttpClient(api.url).get('/v1/account');
      expectErrorBody(res, 401, 'missing_api_key');
      expectRateLimitHeaders(res);
    });

    it.each([['Basic dXNlcjpwYXNz'], ['Bearer'], ['Bearer  two  parts'], ['Token pst_abc'], ['pst_abc']])(
      'invalid_authorization for %j',
      async (header) => {
        const res = await a.get('/v1/account', { headers: { Authorization: header } });
        expectErrorBody(res, 401, 'invalid_authorization');
        expectRateLimitHeaders(res);
      },
    );

    it('accepts the Bearer scheme in any case', async () => {
      const res = await a.get('/v1/account', { headers: { Authorization: `bearer ${account.apiKey}` } });
      expect(res.status).toBe(200);
    });

    it('invalid_api_key for a mistyped key (checksum), an unknown well-formed key and garbage', async () => {
      const k = account.apiKey;
      const typo = k.slice(0, 12) + (k[12] === 'A' ? 'B' : 'A') + k.slice(13);
      for (const bad of [typo, unissuedKey(), 'pst_short', 'x'.repeat(500)]) {
        const res = await a.get('/v1/account', { key: bad });
        expectErrorBody(res, 401, 'invalid_api_key');
        expectRateLimitHeaders(res);
      }
    });

    it('insufficient_scope (403) for a read-only key on every non-GET operation and on keys; GET works', async () => {
      const ro = keep((await a.post('/v1/keys', { name: 'read only', scopes: ['read'] })).body);
      expect(ro.scopes).toEqual(['read']);
      const reader = new HttpClient(api.url, ro.secret);
      expect((await reader.get('/v1/account')).status).toBe(200);
      expect((await reader.get('/v1/pets')).status).toBe(200);
      for (const res of [
        await reader.get('/v1/keys'),
        await reader.post('/v1/pets', { name: 'Rex' }),
        await reader.post('/v1/keys', { name: 'escalate' }),
        await reader.delete(`/v1/keys/${ro.id}`),
        await reader.post(`/v1/keys/${ro.id}/rotate`, {}),
      ]) {
        expectErrorBody(res, 403, 'insufficient_scope');
        expectRateLimitHeaders(res);
      }
      // Nothing happened: the key is still listed, not rotated.
      const listed = (await a.get('/v1/keys')).body.find((k: { id: number }) => k.id === ro.id);
      expect(listed).toEqual(expect.objectContaining({ rotatedOutAt: null }));
    });
  });

  describe('account and key lifecycle', () => {
    it('GET /account: id, name, plan and limits of the calling key', async () => {
      const res = await a.get('/v1/account');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: account.accountId,
        name: expect.any(String),
        plan: 'pro',
        limits: { perMinute: 300, perDay: 10_000 },
        createdAt: expect.any(String),
      });
    });

    it('creates a key (secret once, default scopes), lists keys without any secret', async () => {
      const created = await a.post('/v1/keys', { name: 'ci deploy' });
      expect(created.status).toBe(201);
      const key = keep(created.body);
      expect(key).toEqual({
        id: expect.any(Number),
        name: 'ci deploy',
        prefix: expect.stringMatching(/^pst_/),
        scopes: ['read', 'write'],
        expiresAt: null,
        rotatedOutAt: null,
        lastUsedAt: null,
        createdAt: expect.any(String),
        secret: expect.stringMatching(KEY_PATTERN),
      });
      expect(key.secret.startsWith(key.prefix)).toBe(true);
      expect((await a.get('/v1/account', { key: key.secret })).status).toBe(200);

      const list = await a.get('/v1/keys');
      expect(list.status).toBe(200);
      expect(list.body.map((k: { id: number }) => k.id)).toEqual(expect.arrayContaining([account.keyId, key.id]));
      for (const k of list.body) expect(Object.keys(k).sort()).not.toContain('secret');
      for (const s of secrets) expect(list.text).not.toContain(s.slice(10));
      expect(list.text).not.toMatch(/[0-9a-f]{64}/); // nor a hash
    });

    it('records last use in batches, not per request (flushed on shutdown at the latest)', async () => {
      const key = keep((await a.post('/v1/keys', { name: 'used' })).body);
      const api3 = await startApi();
      expect((await new HttpClient(api3.url, key.secret).get('/v1/account')).status).toBe(200);
      const before = (await a.get('/v1/keys')).body.find((k: { id: number }) => k.id === key.id);
      expect(before.lastUsedAt).toBeNull();
      await api3.close();
      const after = (await a.get('/v1/keys')).body.find((k: { id: number }) => k.id === key.id);
      expect(Date.parse(after.lastUsedAt)).toBeGreaterThan(Date.now() - 10_000);
    });

    it('revokes a key: 204, refused by a SECOND API instance within 1 s, gone from the list, 404 again', async () => {
      const key = keep((await a.post('/v1/keys', { name: 'to revoke' })).body);
      const onApi2 = new HttpClient(api2.url, key.secret);
      // Cached on the second instance first, so only the invalidation can make it refuse.
      expect((await onApi2.get('/v1/account')).status).toBe(200);
      expect((await onApi2.get('/v1/account')).status).toBe(200);

      const revoked = await a.delete(`/v1/keys/${key.id}`);
      expect(revoked.status).toBe(204);
      expectRateLimitHeaders(revoked);
      const ms = await msUntil(401, () => onApi2.get('/v1/account'));
      expect(ms).toBeLessThan(1_000);
      expectErrorBody(await onApi2.get('/v1/account'), 401, 'invalid_api_key');
      expectErrorBody(await a.get('/v1/account', { key: key.secret }), 401, 'invalid_api_key');

      expect((await a.get('/v1/keys')).body.map((k: { id: number }) => k.id)).not.toContain(key.id);
      expectErrorBody(await a.delete(`/v1/keys/${key.id}`), 404, 'not_found');
      expectErrorBody(await a.post(`/v1/keys/${key.id}/rotate`, {}), 404, 'not_found');
    });

    it('an instance whose invalidation connection goes silent (no close) stops trusting its cache within ~2 s', async () => {
      const proxy = await TcpProxy.inFrontOf(api.config.redisUrl);
      const api3 = await startApi({ REDIS_URL: proxy.url });
      try {
        const key = keep((await a.post('/v1/keys', { name: 'silent partition' })).body);
        const onApi3 = new HttpClient(api3.url, key.secret);
        expect((await onApi3.get('/v1/account')).status).toBe(200);
        // Older than the 1 s an entry is trusted without live pub/sub: from here only the
        // subscription's health decides whether it is reloaded.
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        proxy.silent = true;
        expect((await a.delete(`/v1/keys/${key.id}`)).status).toBe(204);
        const ms = await msUntil(401, () => onApi3.get('/v1/account'));
        expect(ms).toBeLessThan(3_500); // a missed PING (1 s timeout) within a second, then a reload
        expectErrorBody(await onApi3.get('/v1/account'), 401, 'invalid_api_key');
      } finally {
        // Redis is then away for this instance: its shutdown must still complete.
        await proxy.stop();
        await expect(api3.close()).resolves.toBeUndefined();
      }
    });

    it('rotates a key: new secret, same name, scopes and expiry; the old works for the grace period on every instance, then stops', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const old = keep((await a.post('/v1/keys', { name: 'rotating', scopes: ['read'], expiresAt })).body);
      const oldOn2 = new HttpClient(api2.url, old.secret);
      expect((await oldOn2.get('/v1/account')).status).toBe(200);

      const res = await a.post(`/v1/keys/${old.id}/rotate`, { gracePeriodSeconds: 1 });
      expect(res.status).toBe(201);
      const fresh = keep(res.body);
      expect(fresh).toEqual(
        expect.objectContaining({
          name: 'rotating',
          scopes: ['read'],
          expiresAt,
          secret: expect.stringMatching(KEY_PATTERN),
        }),
      );
      expect(fresh.id).not.toBe(old.id);
      expect(fresh.secret).not.toBe(old.secret);

      // Grace: both secrets work on both instances; the list shows when the old one stops.
      for (const url of [api.url, api2.url]) {
        expect((await new HttpClient(url, old.secret).get('/v1/account')).status).toBe(200);
        expect((await new HttpClient(url, fresh.secret).get('/v1/account')).status).toBe(200);
      }
      const listed = (await a.get('/v1/keys')).body.find((k: { id: number }) => k.id === old.id);
      const endsAt = Date.parse(listed.rotatedOutAt);
      expect(endsAt).toBeGreaterThan(Date.now() - 1_000);
      expect(endsAt).toBeLessThanOrEqual(Date.now() + 1_000);
      // The old secret in its grace period cannot be rotated again.
      expectErrorBody(await a.post(`/v1/keys/${old.id}/rotate`, {}), 404, 'not_found');

      // After the grace period: refused everywhere (within a second of its end), the new one still works.
      await msUntil(401, () => oldOn2.get('/v1/account'));
      expect(Date.now()).toBeGreaterThanOrEqual(endsAt);
      expect(Date.now()).toBeLessThan(endsAt + 1_000);
      expectErrorBody(await a.get('/v1/account', { key: old.secret }), 401, 'invalid_api_key');
      expect((await new HttpClient(api2.url, fresh.secret).get('/v1/account')).status).toBe(200);
      expect((await a.get('/v1/keys')).body.map((k: { id: number }) => k.id)).not.toContain(old.id);
    });

    it('keys in their rotation grace count toward the quota: rotating at the quota is 422, without a grace it is a swap', async () => {
      const owner = keep(await createAccount(api, 'free'));
      const o = new HttpClient(api.url, owner.apiKey);
      const made: { id: number; secret: string }[] = [];
      for (let i = 0; i < 8; i++) made.push(keep((await o.post('/v1/keys', { name: `quota ${i}` })).body));
      // 9 keys; a rotation with a grace period makes it 10 working secrets, the free plan's quota.
      const rotated = await o.post(`/v1/keys/${made[0].id}/rotate`, { gracePeriodSeconds: 3_600 });
      expect(rotated.status).toBe(201);
      keep(rotated.body);
      expectErrorBody(await o.post('/v1/keys', { name: 'one too many' }), 422, 'quota_exceeded');
      expectErrorBody(
        await o.post(`/v1/keys/${made[1].id}/rotate`, { gracePeriodSeconds: 3_600 }),
        422,
        'quota_exceeded',
      );
      // The refused rotation changed nothing.
      const listed = (await o.get('/v1/keys')).body.find((k: { id: number }) => k.id === made[1].id);
      expect(listed.rotatedOutAt).toBeNull();
      // Without a grace period the old secret stops at once: the new one takes its place.
      const swapped = await o.post(`/v1/keys/${made[1].id}/rotate`, { gracePeriodSeconds: 0 });
      expect(swapped.status).toBe(201);
      keep(swapped.body);
      expectErrorBody(await o.get('/v1/account', { key: made[1].secret }), 401, 'invalid_api_key');
      expectErrorBody(await o.post('/v1/keys', { name: 'still too many' }), 422, 'quota_exceeded');
    });

    it('a grace period longer than 7 days is refused by the API and by the service the CLI calls', async () => {
      const key = keep((await a.post('/v1/keys', { name: 'long grace' })).body);
      const res = await a.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 604_801 });
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'gracePeriodSeconds' })]);
      await expect(api.app.get(ApiKeysService).rotate(account.accountId, key.id, 604_801)).rejects.toMatchObject({
        code: 'validation_failed',
        status: 400,
      });
      const week = keep((await a.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 604_800 })).body);
      expect(week.id).not.toBe(key.id);
    });

    it('rotation grace defaults to 24 h', async () => {
      const old = keep((await a.post('/v1/keys', { name: 'default grace' })).body);
      keep((await a.post(`/v1/keys/${old.id}/rotate`)).body);
      const listed = (await a.get('/v1/keys')).body.find((k: { id: number }) => k.id === old.id);
      expect(Math.abs(Date.parse(listed.rotatedOutAt) - (Date.now() + 86_400_000))).toBeLessThan(5_000);
      expect((await a.get('/v1/account', { key: old.secret })).status).toBe(200);
    });

    it('an expired key is refused (invalid_api_key) on every instance once its expiry passes', async () => {
      const expiresAt = new Date(Date.now() + 1_000);
      const key = keep((await a.post('/v1/keys', { name: 'short lived', expiresAt: expiresAt.toISOString() })).body);
      const on2 = new HttpClient(api2.url, key.secret);
      expect((await on2.get('/v1/account')).status).toBe(200);
      expect((await a.get('/v1/account', { key: key.secret })).status).toBe(200);
      await msUntil(401, () => on2.get('/v1/account'));
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime());
      expectErrorBody(await on2.get('/v1/account'), 401, 'invalid_api_key');
      expectErrorBody(await a.get('/v1/account', { key: key.secret }), 401, 'invalid_api_key');
      expect((await a.get('/v1/keys')).body.map((k: { id: number }) => k.id)).not.toContain(key.id);
    });
  });

  describe('tenancy', () => {
    it("another account cannot see, revoke or rotate A's keys (404) and A's key keeps working", async () => {
      const other = keep(await createAccount(api, 'free'));
      const b = new HttpClient(api.url, other.apiKey);
      const aKey = keep((await a.post('/v1/keys', { name: 'tenant A' })).body);

      const listB = await b.get('/v1/keys');
      expect(listB.body.map((k: { id: number }) => k.id)).toEqual([other.keyId]);
      expect((await b.get('/v1/account')).body.id).toBe(other.accountId);
      for (const res of [await b.delete(`/v1/keys/${aKey.id}`), await b.post(`/v1/keys/${aKey.id}/rotate`, {})]) {
        expectErrorBody(res, 404, 'not_found');
        expectRateLimitHeaders(res);
      }
      // Same answer as for a key that does not exist at all: existence does not leak.
      const missing = await b.delete('/v1/keys/987654321');
      expectErrorBody(missing, 404, 'not_found');
      expect(missing.body.message).toBe((await b.delete(`/v1/keys/${aKey.id}`)).body.message);

      expect((await a.get('/v1/account', { key: aKey.secret })).status).toBe(200);
      const listed = (await a.get('/v1/keys')).body.find((k: { id: number }) => k.id === aKey.id);
      expect(listed.rotatedOutAt).toBeNull();
    });
  });

  describe('bad input: clear 400/404 Error bodies', () => {
    it('malformed JSON', async () => {
      const res = await a.request('POST', '/v1/keys', {
        rawBody: '{"name": "x",',
        headers: { 'Content-Type': 'application/json' },
      });
      expectErrorBody(res, 400, 'invalid_json');
      expectRateLimitHeaders(res);
    });

    it.each([
      ['unknown scopes', { name: 'x', scopes: ['read', 'root'] }, 'scopes'],
      ['empty scopes', { name: 'x', scopes: [] }, 'scopes'],
      ['expiresAt in the past', { name: 'x', expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
      ['expiresAt not a date', { name: 'x', expiresAt: 'tomorrow' }, 'expiresAt'],
      ['no name', { scopes: ['read'] }, 'name'],
      ['name too long', { name: 'n'.repeat(101) }, 'name'],
    ])('%s', async (_what, body, field) => {
      const res = await a.post('/v1/keys', body);
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expectRateLimitHeaders(res);
    });

    it('a bad grace period, a malformed key id, an unknown key id', async () => {
      for (const gracePeriodSeconds of [-1, 1.5, 'soon', 604_801]) {
        const res = await a.post(`/v1/keys/${account.keyId}/rotate`, { gracePeriodSeconds });
        expectErrorBody(res, 400, 'validation_failed');
      }
      expectErrorBody(await a.delete('/v1/keys/abc'), 400, 'invalid_parameter');
      expectErrorBody(await a.post('/v1/keys/0/rotate', {}), 400, 'invalid_parameter');
      expectErrorBody(await a.post('/v1/keys/999999999/rotate', {}), 404, 'not_found');
      // The key used for all of this was never rotated by those attempts.
      expect((await a.get('/v1/account')).status).toBe(200);
    });
  });

  describe('operator CLI', () => {
    it('key:create --json issues a working key with the given scopes; key:revoke makes every API refuse it within 1 s', async () => {
      const { stdout } = await cli(
        'key:create',
        '--account',
        String(account.accountId),
        '--name',
        'from cli',
        '--scopes',
        'read',
        '--json',
      );
      const lines = stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      const out = keep(JSON.parse(lines[0]));
      expect(out).toEqual({ keyId: expect.any(Number), apiKey: expect.stringMatching(KEY_PATTERN), scopes: ['read'] });

      const viaCli = new HttpClient(api2.url, out.apiKey);
      expect((await viaCli.get('/v1/account')).body.id).toBe(account.accountId);
      expectErrorBody(await viaCli.post('/v1/keys', { name: 'nope' }), 403, 'insufficient_scope');

      const revoked = await cli('key:revoke', '--account', String(account.accountId), '--key', String(out.keyId));
      const at = Date.now();
      expect(revoked.stdout).toContain('revoked');
      await msUntil(401, () => viaCli.get('/v1/account'));
      expect(Date.now() - at).toBeLessThan(1_000);
      expectErrorBody(await viaCli.get('/v1/account'), 401, 'invalid_api_key');
    });

    it("key:create and key:revoke refuse bad input and other accounts' keys, naming the problem", async () => {
      await expect(
        cli('key:create', '--account', String(account.accountId), '--name', 'x', '--scopes', 'read,root'),
      ).rejects.toMatchObject({ stderr: expect.stringMatching(/^error: scopes: unknown scope root\n$/) });
      await expect(
        cli('key:create', '--account', String(account.accountId), '--name', 'x', '--expires-at', '2001-01-01'),
      ).rejects.toMatchObject({ stderr: expect.stringContaining('expiresAt: must be in the future') });
      const other = keep(await createAccount(api, 'free'));
      await expect(
        cli('key:revoke', '--account', String(account.accountId), '--key', String(other.keyId)),
      ).rejects.toMatchObject({ stderr: expect.stringContaining('not found') });
      expect((await new HttpClient(api.url, other.apiKey).get('/v1/account')).status).toBe(200);
    });

    it('account:set-plan refuses limits the limiter could not use, at configuration time', async () => {
      const id = String(account.accountId);
      await expect(
        cli('account:set-plan', '--account', id, '--plan', 'enterprise', '--limit-minute', '0', '--limit-day', '10'),
      ).rejects.toMatchObject({ stderr: expect.stringContaining('limitPerMinute') });
      await expect(
        cli('account:set-plan', '--account', id, '--plan', 'free', '--limit-minute', '5'),
      ).rejects.toMatchObject({ stderr: expect.stringContaining('only enterprise accounts take custom limits') });
      expect((await a.get('/v1/account')).body.plan).toBe('pro');
    });

    it('prints its own error and nothing else while Redis is down (no library stack traces, a process)', async () => {
      const down = await TcpProxy.inFrontOf(api.config.redisUrl);
      await down.stop(); // its port now refuses connections
      const args = ['--account', String(account.accountId), '--plan', 'enterprise', '--limit-minute', '0'];
      await expect(cliProcess({ REDIS_URL: down.url }, 'account:set-plan', ...args)).rejects.toMatchObject({
        code: 1,
        stderr: 'error: limitPerMinute: enterprise accounts need a positive integer limit (at most 2147483647)\n',
      });
    });
  });

  it('records api_key events without secrets', async () => {
    const rows: { type: string; data: object }[] = await api.app
      .get(DataSource)
      .query(`SELECT type, data FROM events WHERE account_id = $1 ORDER BY id`, [account.accountId]);
    const types = new Set(rows.map((r) => r.type));
    for (const t of ['api_key.created', 'api_key.revoked', 'api_key.rotated']) expect(types).toContain(t);
    const text = JSON.stringify(rows);
    for (const s of secrets) expect(text).not.toContain(s);
  });

  it('never writes a secret to the log file or the metrics', async () => {
    expect(secrets.length).toBeGreaterThan(10);
    const marker = `keys-log-check-${Date.now()}`;
    await a.get('/v1/keys', { headers: { 'X-Request-Id': marker } });
    const log = await eventually(async () => {
      const text = await readFile(api.config.logFile as string, 'utf8');
      return text.includes(marker) ? text : null;
    });
    const metrics = (await new HttpClient(api.metricsUrl).get('/metrics')).text;
    for (const s of secrets) {
      expect(log).not.toContain(s.slice(4, 20));
      expect(metrics).not.toContain(s.slice(4, 20));
    }
  });
});
