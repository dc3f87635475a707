import { Client } from 'pg';
import { ApiKeyAuthenticator } from '@app/access';
import { forgedKey, forgedLegacyKey, keyLookups } from '../support/keys';
import { ANONYMOUS_LIMITS } from '@app/access';
import { createAccount, RunningApi, startApi } from '../support/test-apps';
import { HttpClient } from '../support/http';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The cache of verified keys holds 50,000; one more garbage key than that would push the oldest real key out. */
const VERIFIED_CACHE_ENTRIES = 50_000;

describe('garbage keys (made-up keys with a valid checksum)', () => {
  let api: RunningApi;

  /**
   * Transactions of this database, as Postgres counts them. A backend holds its counts up to 10 s but reports them
   * as it exits: the database's other backends (the API's pool, which connects again) are ended and waited for first.
   */
  async function transactions(): Promise<number> {
    const client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      const { rows: ended } = await client.query(
        `SELECT pg_terminate_backend(pid, 10000) AS gone FROM pg_stat_activity
          WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      );
      expect(ended.map((r) => r.gone)).not.toContain(false);
      const { rows } = await client.query(
        'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
      );
      return Number(rows[0].n);
    } finally {
      await client.end();
    }
  }

  /** Key lookups the API sent to Postgres while `fn` ran, by its own counter on /metrics. */
  async function lookupsDuring(fn: () => Promise<unknown>): Promise<number> {
    const before = await keyLookups(api, 'postgres');
    await fn();
    return (await keyLookups(api, 'postgres')) - before;
  }

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('1,000 forged keys in each format from one address cost Postgres no transaction', async () => {
    const client = new HttpClient(api.url);
    const before = await transactions();
    const statuses = new Map<number, number>();
    const lookups = await lookupsDuring(async () => {
      for (const forge of [forgedKey, forgedLegacyKey]) {
        for (let batch = 0; batch < 10; batch++) {
          const answers = await Promise.all(
            Array.from({ length: 100 }, () => client.get('/v1/pets', { key: forge() })),
          );
          for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        }
      }
    });
    const spent = (await transactions()) - before;
    // The minute windows are fixed: a burst that crosses a minute's end meets two of them.
    expect(statuses.get(401)).toBeLessThanOrEqual(2 * ANONYMOUS_LIMITS.perMinute);
    expect(lookups).toBe(0);
    // A lookup each would be 2,000; the API's own periodic work commits a few more on a slow machine.
    expect(spent).toBeLessThanOrEqual(50);
  }, 90_000);

  it('an address already refused gets 429 for a random key without a key lookup', async () => {
    const client = new HttpClient(api.url);
    // Until refused: a minute boundary may fall inside the loop and open a fresh window.
    for (let i = 0; i < 3 * ANONYMOUS_LIMITS.perMinute; i++) if ((await client.get('/v1/pets')).status === 429) break;
    let status = 0;
    const lookups = await lookupsDuring(async () => {
      ({ status } = await client.get('/v1/pets', { key: forgedKey() }));
    });
    expect(status).toBe(429);
    expect(lookups).toBe(0);
  });

  it('a real key stays cached after more garbage keys than the cache of verified keys holds', async () => {
    const { apiKey } = await createAccount(api);
    const client = new HttpClient(api.url, apiKey);
    expect((await client.get('/v1/account')).status).toBe(200);
    // Straight to the authenticator (what every address's lookups reach, summed over many
    // addresses): 50,000 HTTP requests would cost this shared machine far more.
    const authenticator = api.app.get(ApiKeyAuthenticator);
    for (let sent = 0; sent <= VERIFIED_CACHE_ENTRIES; sent += 500) {
      await Promise.all(Array.from({ length: 500 }, () => authenticator.authenticate(forgedKey())));
      // A turn of the event loop per batch: the server's keep-alive timers run on time, rather than
      // all at once as the next request reuses a connection they close (ECONNRESET).
      await new Promise(setImmediate);
    }
    let status = 0;
    const lookups = await lookupsDuring(async () => ({ status } = await client.get('/v1/account')));
    expect(status).toBe(200);
    expect(lookups).toBe(0);
  }, 120_000);

  it('a verified key whose cached answer went stale is served even when its address spent the anonymous budget', async () => {
    // A short freshness so the entry goes stale within the test, as AUTH_CACHE_TTL_MS does in minutes.
    const shortCache = await startApi({ AUTH_CACHE_TTL_MS: '300' });
    try {
      const { apiKey } = await createAccount(shortCache);
      const client = new HttpClient(shortCache.url, apiKey);
      expect((await client.get('/v1/account')).status).toBe(200);
      // Keyless requests from the key's own address spend that address's anonymous budget.
      const anonymous = new HttpClient(shortCache.url);
      const sameAddress = { headers: { 'X-Forwarded-For': client.clientIp } };
      // The minute's budget is the clock's minute: a loop crossing into the next one starts it again,
      // so spend until refused (twice the budget at most).
      let refused = false;
      for (let i = 0; i <= 2 * ANONYMOUS_LIMITS.perMinute && !refused; i++) {
        refused = (await anonymous.get('/v1/pets', sameAddress)).status === 429;
      }
      expect(refused).toBe(true);
      await sleep(600); // the key's entry is stale now: only Postgres can tell
      expect((await client.get('/v1/account')).status).toBe(200);
    } finally {
      await shortCache.close();
    }
  });
});
