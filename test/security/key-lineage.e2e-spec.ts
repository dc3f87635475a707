import { DataSource } from 'typeorm';
import { AdminScope1763772200000 } from '../../libs/database/src/migrations/1763772200000-admin-scope';
import { createAccount, RunningApi, startApi } from '../support/test-apps';
import { HttpClient } from '../support/http';
import { expectErrorBody, expectRateLimitHeaders } from '../support/expect-error';
import { TestClock } from '../support/test-clock';

const HOUR = 3_600_000;
const inHours = (h: number) => new Date(Date.now() + h * HOUR).toISOString();

/**
 * A key never outgrows the key that made it, and key management cannot lock the owner out. Each account is fresh, so no test depends on another's keys.
 */
describe('key lineage: keys never outgrow the key that made them', () => {
  let api: RunningApi;
  /** An account created the way the CLI does it; its key is the owner's (read, write, admin). */
  let owner: () => Promise<{ client: HttpClient; keyId: number }>;

  beforeAll(async () => {
    api = await startApi();
    owner = async () => {
      const { apiKey, keyId } = await createAccount(api, 'pro');
      return { client: new HttpClient(api.url, apiKey), keyId };
    };
  });
  afterAll(() => api?.close());

  it("the CLI's account key has read, write and admin; a child gets the parent's read and write by default", async () => {
    const { client, keyId } = await owner();
    const listed = (await client.get('/v1/keys')).body;
    expect(listed.find((k: { id: number }) => k.id === keyId).scopes).toEqual(['read', 'write', 'admin']);
    const child = await client.post('/v1/keys', { name: 'ci' });
    expect(child.status).toBe(201);
    expect(child.body.scopes).toEqual(['read', 'write']);
  });

  it("a child's scopes are a subset of its parent's: more is 403 insufficient_scope naming the missing scope", async () => {
    const { client } = await owner();
    const parent = await client.post('/v1/keys', { name: 'key manager', scopes: ['read', 'admin'] });
    expect(parent.status).toBe(201);
    const manager = client.withKey(parent.body.secret);

    const escalate = await manager.post('/v1/keys', { name: 'escalate', scopes: ['read', 'write'] });
    expectErrorBody(escalate, 403, 'insufficient_scope');
    expectRateLimitHeaders(escalate);
    expect(escalate.body.details).toEqual([{ field: 'scopes', message: expect.stringContaining('write') }]);

    expect((await manager.post('/v1/keys', { name: 'same', scopes: ['admin', 'read'] })).status).toBe(201);
    const byDefault = await manager.post('/v1/keys', { name: 'default scopes' });
    expect(byDefault.status).toBe(201);
    expect(byDefault.body.scopes).toEqual(['read']);
  });

  it("a child's expiry is no later than its parent's: default is the parent's, later is 422 key_expiry_too_late", async () => {
    const { client } = await owner();
    const expiresAt = inHours(1);
    const parent = await client.post('/v1/keys', { name: 'temporary', scopes: ['read', 'write', 'admin'], expiresAt });
    const temporary = client.withKey(parent.body.secret);

    for (const body of [{ name: 'no expiry' }, { name: 'null expiry', expiresAt: null }]) {
      const child = await temporary.post('/v1/keys', body);
      expect(child.status).toBe(201);
      expect(child.body.expiresAt).toBe(expiresAt);
    }
    const later = await temporary.post('/v1/keys', { name: 'outlives', expiresAt: inHours(2) });
    expectErrorBody(later, 422, 'key_expiry_too_late');
    expect(later.body.details).toEqual([{ field: 'expiresAt', message: expect.stringContaining(expiresAt) }]);
    const sooner = await temporary.post('/v1/keys', { name: 'sooner', expiresAt: inHours(0.5) });
    expect(sooner.status).toBe(201);
  });

  it('a key cannot rotate or revoke a key with more scopes or a later expiry than its own (403)', async () => {
    const { client, keyId } = await owner();
    const temporary = client.withKey(
      (await client.post('/v1/keys', { name: 'temp', scopes: ['read', 'write', 'admin'], expiresAt: inHours(1) })).body
        .secret,
    );
    // A new secret for the owner's key would be a permanent full key in the temporary key's hands.
    const rotate = await temporary.post(`/v1/keys/${keyId}/rotate`, {});
    expectErrorBody(rotate, 403, 'insufficient_scope');
    expectErrorBody(await temporary.delete(`/v1/keys/${keyId}`), 403, 'insufficient_scope');
    const ownerKey = (await client.get('/v1/keys')).body.find((k: { id: number }) => k.id === keyId);
    expect(ownerKey.rotatedOutAt).toBeNull();
  });

  it('a key in its rotation grace period cannot create, rotate or revoke keys (403 api_key_rotated_out)', async () => {
    const { client } = await owner();
    const made = (await client.post('/v1/keys', { name: 'rotating', scopes: ['read', 'write', 'admin'] })).body;
    const old = client.withKey(made.secret);
    const fresh = await old.post(`/v1/keys/${made.id}/rotate`, {});
    expect(fresh.status).toBe(201);

    const attempts = [
      await old.post('/v1/keys', { name: 'from the grace period' }),
      await old.post(`/v1/keys/${fresh.body.id}/rotate`, {}),
      await old.delete(`/v1/keys/${fresh.body.id}`),
    ];
    for (const res of attempts) expectErrorBody(res, 403, 'api_key_rotated_out');
    // It still works for everything else until its grace period ends; its replacement is untouched.
    expect((await old.get('/v1/keys')).status).toBe(200);
    expect((await client.get('/v1/account', { key: fresh.body.secret })).status).toBe(200);
  });

  it('the last key able to manage keys cannot be revoked (409 last_admin_key)', async () => {
    const { client, keyId } = await owner();
    const second = (await client.post('/v1/keys', { name: 'second admin', scopes: ['read', 'admin'] })).body;
    // A key without admin does not count as one.
    await client.post('/v1/keys', { name: 'worker', scopes: ['read', 'write'] });
    expect((await client.delete(`/v1/keys/${second.id}`)).status).toBe(204);

    const last = await client.delete(`/v1/keys/${keyId}`);
    expectErrorBody(last, 409, 'last_admin_key');
    expectRateLimitHeaders(last);
    expect((await client.get('/v1/account')).status).toBe(200);
  });

  it('two admin keys revoking each other at once: one succeeds, the account keeps a managing key', async () => {
    const { client, keyId } = await owner();
    const second = (await client.post('/v1/keys', { name: 'second admin', scopes: ['read', 'write', 'admin'] })).body;
    const answers = await Promise.all([
      client.delete(`/v1/keys/${second.id}`),
      client.delete(`/v1/keys/${keyId}`, { key: second.secret }),
    ]);
    expect(answers.filter((r) => r.status === 204)).toHaveLength(1);
    const survivor = answers[0].status === 204 ? client : client.withKey(second.secret);
    const admins = (await survivor.get('/v1/keys')).body.filter((k: { scopes: string[] }) =>
      k.scopes.includes('admin'),
    );
    expect(admins).toHaveLength(1);
  });

  it('a write key without admin cannot list, create, rotate or revoke keys (403 insufficient_scope)', async () => {
    const { client, keyId } = await owner();
    const writer = client.withKey((await client.post('/v1/keys', { name: 'writer' })).body.secret);
    for (const res of [
      await writer.get('/v1/keys'),
      await writer.post('/v1/keys', { name: 'escalate' }),
      await writer.post(`/v1/keys/${keyId}/rotate`, {}),
      await writer.delete(`/v1/keys/${keyId}`),
    ]) {
      expectErrorBody(res, 403, 'insufficient_scope');
      expectRateLimitHeaders(res);
    }
    expect((await writer.get('/v1/account')).status).toBe(200);
    expect((await writer.get('/v1/rate_limit')).status).toBe(200);
  });

  it("a key without admin does not get a created key's secret by replaying its Idempotency-Key", async () => {
    const { client } = await owner();
    const writer = client.withKey((await client.post('/v1/keys', { name: 'writer' })).body.secret);
    const headers = { 'Idempotency-Key': `lineage-${Date.now()}` };
    expect((await client.request('POST', '/v1/keys', { body: { name: 'deploy' }, headers })).status).toBe(201);
    const replay = await writer.request('POST', '/v1/keys', { body: { name: 'deploy' }, headers });
    expectErrorBody(replay, 403, 'insufficient_scope');
    expect(replay.text).not.toContain('pst_');
  });

  it("the migration gives admin to each account's oldest working non-expiring write key, and to no other", async () => {
    const q = api.app.get(DataSource).createQueryRunner();
    await q.startTransaction();
    try {
      // Back to the schema before `admin` (inside this transaction only), with keys as they were then.
      const migration = new AdminScope1763772200000();
      await migration.down(q);
      const [{ id: accountId }] = await q.query(
        `INSERT INTO accounts (name, plan) VALUES ('before admin', 'free') RETURNING id`,
      );
      const key = async (name: string, scopes: string[], extra = '') =>
        (
          await q.query(
            `INSERT INTO api_keys (account_id, name, prefix, key_hash, scopes, expires_at, revoked_at)
             VALUES ($1, $2, 'pst_x', md5(random()::text), $3, ${extra || 'NULL, NULL'}) RETURNING id`,
            [accountId, name, scopes],
          )
        )[0].id;
      await key('revoked default', ['read', 'write'], `NULL, now()`);
      await key('reader', ['read']);
      await key('expiring', ['read', 'write'], `now() + interval '1 hour', NULL`);
      const chosen = await key('permanent', ['read', 'write']);
      await key('younger', ['read', 'write']);
      await migration.up(q);
      const admins = await q.query(`SELECT id FROM api_keys WHERE account_id = $1 AND 'admin' = ANY(scopes)`, [
        accountId,
      ]);
      expect(admins).toEqual([{ id: chosen }]);
    } finally {
      await q.rollbackTransaction();
      await q.release();
    }
  });

  describe('bans', () => {
    let banApi: RunningApi;
    const clock = new TestClock();
    beforeAll(async () => {
      banApi = await startApi({ RATE_LIMIT_BAN_STRIKES: '1', RATE_LIMIT_BAN_SECONDS: '60' }, { clock });
    });
    afterAll(() => banApi?.close());

    it('rotating a banned key hands the ban to the replacement for the time it has left', async () => {
      const minute = Date.UTC(2032, 0, 1, 10, 0, 0);
      clock.set(minute + 5_000);
      const { apiKey } = await createAccount(banApi, 'enterprise', { limitPerMinute: 3, limitPerDay: 100 });
      const ownerKey = new HttpClient(banApi.url, apiKey);
      const made = (await ownerKey.post('/v1/keys', { name: 'noisy' })).body;
      const noisy = ownerKey.withKey(made.secret);
      expect((await noisy.get('/v1/account')).status).toBe(200);
      expect((await noisy.get('/v1/account')).status).toBe(200); // 3 of 3 used
      expectErrorBody(await noisy.get('/v1/account'), 429, 'rate_limit_exceeded');
      clock.advance(1_000); // a refusal a second after the first is a strike; one strike bans
      expectErrorBody(await noisy.get('/v1/account'), 429, 'api_key_banned');

      clock.set(minute + 65_000); // the account's minute has room again: the owner can act
      const rotated = await ownerKey.post(`/v1/keys/${made.id}/rotate`, { gracePeriodSeconds: 0 });
      expect(rotated.status).toBe(201);
      const replacement = await ownerKey.get('/v1/account', { key: rotated.body.secret });
      expectErrorBody(replacement, 429, 'api_key_banned');
      const retryAfter = Number(replacement.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(50);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The owner's own key was never banned.
      expect((await ownerKey.get('/v1/account')).status).toBe(200);
    });
  });
});
