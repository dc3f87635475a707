import { dropDatabase, recreateDatabase } from '../support/own-stores';
import { HttpClient } from '../support/http';
import { SseClient, SseFrame } from '../support/sse-client';
import { closeAll, createAccount, RunningApi, startApi } from '../support/test-apps';

/**
 * Trust, round five: an open `GET /v1/events/stream` answers for its key on every replica, counts against its
 * account's cap as well as its key's, and hears only its own deployment's events when deployments share a Redis.
 */
describe('event streams and their keys', () => {
  let a: RunningApi;
  let b: RunningApi;
  const open: SseClient[] = [];

  const stream = async (api: RunningApi, key: string) => {
    const client = await SseClient.open(api.url, key);
    open.push(client);
    return client;
  };

  const errorFrame = (client: SseClient): SseFrame | undefined => client.frames.find((f) => f.event === 'error');

  /** Waits for the stream's error frame and end; returns the Error body and how long after `since` it ended. */
  async function endedByKey(client: SseClient, since: number) {
    await client.waitFor(() => client.ended, 3_000, 'the end of the stream');
    const frame = errorFrame(client);
    expect(frame).toBeDefined();
    return { body: JSON.parse(frame!.data!) as Record<string, unknown>, afterMs: Date.now() - since };
  }

  beforeAll(async () => {
    // Two replicas on the same stores; heartbeats far apart, so only the key's change can end a stream in time.
    a = await startApi({ EVENT_STREAM_HEARTBEAT_MS: '30000' });
    b = await startApi({ EVENT_STREAM_HEARTBEAT_MS: '30000' });
  });
  afterEach(() => Promise.all(open.splice(0).map((c) => c.close())));
  afterAll(() => closeAll([() => a.close(), () => b.close()]));

  describe('a stream ends within 1 s of its key ceasing to work, with an error frame, on every replica', () => {
    it('when the key is revoked', async () => {
      const { apiKey } = await createAccount(a);
      const admin = new HttpClient(a.url, apiKey);
      const key = (await admin.post('/v1/keys', { name: 'streamer', scopes: ['read'] })).body;
      const onA = await stream(a, key.secret);
      const onB = await stream(b, key.secret);
      expect([onA.status, onB.status]).toEqual([200, 200]);

      expect((await admin.delete(`/v1/keys/${key.id}`)).status).toBe(204);
      const revokedAt = Date.now();
      for (const client of [onA, onB]) {
        const { body, afterMs } = await endedByKey(client, revokedAt);
        expect(afterMs).toBeLessThan(1_000);
        expect(body).toEqual({ code: 'invalid_api_key', status: 401, message: expect.stringMatching(/revoked/) });
      }
    });

    it('when the key expires', async () => {
      const { apiKey } = await createAccount(a);
      const admin = new HttpClient(a.url, apiKey);
      const expiresAt = new Date(Date.now() + 2_000);
      const key = (await admin.post('/v1/keys', { name: 'short', scopes: ['read'], expiresAt })).body;
      const client = await stream(b, key.secret);
      expect(client.status).toBe(200);

      const { body } = await endedByKey(client, expiresAt.getTime());
      expect(Date.now() - expiresAt.getTime()).toBeLessThan(1_000);
      expect(body).toEqual(expect.objectContaining({ code: 'invalid_api_key', message: expect.stringMatching(/expired/) }));
    });

    it("when its rotation's grace period ends, and not before", async () => {
      const { apiKey } = await createAccount(a);
      const admin = new HttpClient(a.url, apiKey);
      const key = (await admin.post('/v1/keys', { name: 'rotating', scopes: ['read'] })).body;
      const onA = await stream(a, key.secret);
      const onB = await stream(b, key.secret);

      const rotated = await admin.post(`/v1/keys/${key.id}/rotate`, { gracePeriodSeconds: 2 });
      expect(rotated.status).toBe(201);
      const graceEnds = Date.now() + 2_000;
      await new Promise((r) => setTimeout(r, 1_000));
      expect([onA.ended, onB.ended]).toEqual([false, false]);
      for (const client of [onA, onB]) {
        const { body } = await endedByKey(client, graceEnds);
        expect(Date.now() - graceEnds).toBeLessThan(1_000);
        expect(body).toEqual(expect.objectContaining({ code: 'invalid_api_key', message: expect.stringMatching(/rotation/) }));
      }
    });
  });

  describe('stream caps count per account, across replicas', () => {
    it("a Free account cycling create, stream and revoke holds no more streams than its plan's per-key cap", async () => {
      const { apiKey } = await createAccount(a, 'free');
      const admin = new HttpClient(a.url, apiKey);
      const streams: SseClient[] = [];
      for (let i = 0; i < 5; i++) {
        const key = (await admin.post('/v1/keys', { name: `cycle ${i}`, scopes: ['read'] })).body;
        for (const api of [a, b]) streams.push(await stream(api, key.secret));
        expect((await admin.delete(`/v1/keys/${key.id}`)).status).toBe(204);
      }
      await Promise.all(streams.map((s) => s.waitFor(() => s.ended, 3_000, 'the end of a revoked key’s stream')));
      // Still allowed its plan's streams: the revoked keys' slots were freed.
      const key = (await admin.post('/v1/keys', { name: 'last', scopes: ['read'] })).body;
      expect((await stream(a, key.secret)).status).toBe(200);
      expect((await stream(b, key.secret)).status).toBe(200);
    });

    it("beyond the account's cap (4 on Free) answers 429 whichever key asks", async () => {
      const { apiKey } = await createAccount(a, 'free');
      const admin = new HttpClient(a.url, apiKey);
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push((await admin.post('/v1/keys', { name: `k${i}`, scopes: ['read'] })).body);
      const statuses = [];
      for (const [i, secret] of [keys[0].secret, keys[0].secret, keys[1].secret, keys[1].secret].entries())
        statuses.push((await stream(i % 2 ? b : a, secret)).status);
      expect(statuses).toEqual([200, 200, 200, 200]);

      const refused = await stream(b, keys[2].secret);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(
        expect.objectContaining({
          code: 'rate_limit_exceeded',
          details: [{ field: 'streams', message: 'limit 4 open streams per account' }],
        }),
      );
      expect(refused.headers.get('retry-after')).toBeTruthy();
    });
  });

  it('two deployments on one Redis (two databases, two db indexes): a stream hears nothing made in the other', async () => {
    const other = new URL(a.config.databaseUrl);
    other.pathname = `${other.pathname}_other`;
    await recreateDatabase(other.toString());
    const redis = new URL(a.config.redisUrl);
    redis.pathname = '/7';
    const c = await startApi({ DATABASE_URL: other.toString(), REDIS_URL: redis.toString() });
    try {
      // The same account id in both deployments.
      const mine = await createAccount(a);
      let theirs = await createAccount(c);
      while (theirs.accountId < mine.accountId) theirs = await createAccount(c);
      expect(theirs.accountId).toBe(mine.accountId);

      const client = await stream(a, mine.apiKey);
      expect((await new HttpClient(c.url, theirs.apiKey).post('/v1/categories', { name: 'elsewhere' })).status).toBe(201);
      expect((await new HttpClient(a.url, mine.apiKey).post('/v1/categories', { name: 'here' })).status).toBe(201);
      const [event] = await client.waitForEvents(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(client.events).toEqual([event]);
      expect(event).toEqual(expect.objectContaining({ type: 'category.created', data: expect.objectContaining({ name: 'here' }) }));
    } finally {
      await c.close();
      await dropDatabase(other.toString());
    }
  });
});
