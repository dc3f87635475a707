import { randomInt, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { ApiKeyAuthenticator, ApiKeysService, displayPrefix, hashApiKey } from '@app/access';
import { preparedQuery, sql } from '@app/database';
import { UnitOfWork } from '@app/transactions';
import { rootLogger } from '@app/observability';
import { REDIS, RedisClient } from '@app/redis';
import { expectErrorBody } from '../support/expect-error';
import { HttpClient } from '../support/http';
import { keyLookups, unissuedKey } from '../support/keys';
import { closeAll, createAccount, RunningApi, startApi } from '../support/test-apps';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const address = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
// A revocation deletes the key's shared entry a second time 2 s later (for a racing lookup).
const PAST_SECOND_DELETE_MS = 2_100;

/** Keys of one new account, issued in one transaction and each revoked the way the operator CLI does it. */
async function revokedKeys(api: RunningApi, count: number): Promise<string[]> {
  const { accountId } = await createAccount(api);
  const keys = api.app.get(ApiKeysService);
  const issued = await api.app.get(UnitOfWork).run(async (tx) => {
    const made = [];
    for (let i = 0; i < count; i++) made.push(await keys.issue(tx, accountId, { name: `revoked ${i}` }));
    return made;
  });
  for (let i = 0; i < issued.length; i += 25) {
    await Promise.all(issued.slice(i, i + 25).map((k) => keys.revoke(accountId, k.id)));
  }
  return issued.map((k) => k.secret);
}

/** Key lookups both replicas sent to Postgres. */
const postgresLookups = async (...apis: RunningApi[]) =>
  (await Promise.all(apis.map((api) => keyLookups(api, 'postgres')))).reduce((a, b) => a + b, 0);

/**
 * Revoked keys cannot be made up like forged ones, but a tenant can make and revoke as many as it
 * likes (they leave its quota): their answers are shared by every replica, and an address's misses
 * cannot spend the lookups other tenants' new keys need.
 */
describe('revoked keys', () => {
  let a: RunningApi;
  let b: RunningApi;

  beforeAll(async () => {
    // A budget this machine's attack outruns (it manages about 110 lookups/s a replica here; the
    // finding saw ~580/s against the default 500).
    const env = { AUTH_LOOKUP_RATE: '50' };
    a = await startApi(env);
    b = await startApi(env);
  });
  afterAll(() => closeAll([() => b?.close(), () => a?.close()]));

  it('1,100 revoked keys cycled from one address at 24 concurrent for 10 s: 20 new keys of another tenant all get 200', async () => {
    const revoked = await revokedKeys(a, 1_100);
    const { accountId } = await createAccount(a);
    const keys = a.app.get(ApiKeysService);
    const genuine: string[] = [];
    for (let i = 0; i < 20; i++) genuine.push((await keys.create(accountId, { name: `genuine ${i}` })).secret);
    // In no cache: as if issued before the replicas shared what they verified, or an hour ago.
    await Promise.all(
      genuine.map((k) => a.app.get<RedisClient>(REDIS).del(`${a.config.redisNamespace}:auth:key:${hashApiKey(k)}`)),
    );
    await sleep(PAST_SECOND_DELETE_MS);

    const before = await postgresLookups(a, b);
    const attacker = address();
    const end = Date.now() + 10_000;
    let sent = 0;
    // At least 10 s, and every revoked key twice: a loaded machine sends fewer requests in the 10 s.
    const attack = Array.from({ length: 24 }, async () => {
      while (Date.now() < end || sent < 2 * revoked.length) {
        const i = sent++;
        // Plain fetch: the contract check of every answer would slow the attack down.
        const res = await fetch(`${(i % 2 ? b : a).url}/v1/pets`, {
          headers: { Authorization: `Bearer ${revoked[i % revoked.length]}`, 'X-Forwarded-For': attacker },
        });
        await res.arrayBuffer();
      }
    });
    const tenant = address();
    const statuses: number[] = [];
    for (const [i, key] of genuine.entries()) {
      await sleep(400);
      const res = await new HttpClient((i % 2 ? b : a).url, key).get('/v1/pets', {
        headers: { 'X-Forwarded-For': tenant },
      });
      statuses.push(res.status);
    }
    await Promise.all(attack);
    const lookups = (await postgresLookups(a, b)) - before;

    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(lookups - genuine.length).toBeLessThanOrEqual(1_100);
  }, 120_000);

  it('replica B asks Postgres nothing for a key replica A found revoked', async () => {
    const [secret] = await revokedKeys(a, 1);
    await sleep(PAST_SECOND_DELETE_MS);
    const from = address();
    expectErrorBody(
      await new HttpClient(a.url, secret).get('/v1/pets', { headers: { 'X-Forwarded-For': from } }),
      401,
      'invalid_api_key',
    );
    const before = await keyLookups(b, 'postgres');
    expectErrorBody(
      await new HttpClient(b.url, secret).get('/v1/pets', { headers: { 'X-Forwarded-For': from } }),
      401,
      'invalid_api_key',
    );
    expect((await keyLookups(b, 'postgres')) - before).toBe(0);
  });

  it('a key issued under a hash remembered as no key works at once on another replica', async () => {
    const secret = unissuedKey();
    const from = { headers: { 'X-Forwarded-For': address() } };
    expectErrorBody(await new HttpClient(a.url, secret).get('/v1/pets', from), 401, 'invalid_api_key');
    // Random secrets never repeat: only a lookup racing the issuance could see the hash unknown first.
    const { accountId } = await createAccount(a);
    await preparedQuery(
      a.app.get(DataSource),
      sql`INSERT INTO api_keys (account_id, name, prefix, key_hash, scopes, tagged)
          VALUES (${accountId}, 'late', ${displayPrefix(secret)}, ${hashApiKey(secret)}, ${['read']}, true)`,
    );
    await a.app.get(ApiKeyAuthenticator).prime(secret); // what issuing and rotating do once committed
    expect((await new HttpClient(b.url, secret).get('/v1/pets', from)).status).toBe(200);
  });

  it('counts each refusal of the lookup budget and logs none of them as an error', async () => {
    const tight = await startApi({ AUTH_LOOKUP_CONCURRENCY: '1', AUTH_LOOKUP_RATE: '1' });
    try {
      const before = await keyLookups(tight, 'over_budget');
      const run = randomUUID();
      // Each from an address of its own: no address's budget turns them away first.
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          new HttpClient(tight.url).get('/v1/pets', {
            key: unissuedKey(),
            headers: { 'X-Forwarded-For': address(), 'X-Request-Id': `${run}-${i}` },
          }),
        ),
      );
      const refused = answers.filter((r) => r.status === 503).length;
      expect(refused).toBeGreaterThan(0);
      expect((await keyLookups(tight, 'over_budget')) - before).toBe(refused);
      await new Promise<void>((resolve, reject) =>
        rootLogger(tight.config, 'api').flush((err) => (err ? reject(err) : resolve())),
      );
      const lines = readFileSync(tight.config.logFile as string, 'utf8')
        .split('\n')
        .filter((l) => l.includes(run))
        .map((l) => JSON.parse(l) as { level: number; status: number });
      expect(lines.filter((l) => l.status === 503)).toHaveLength(refused);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await tight.close();
    }
  });
});
