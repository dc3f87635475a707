import { readFile, stat } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import Redis from 'ioredis';
import { AccountsService } from '@app/access';
import { MAX_BATCH, PlanRateLimiter } from '@app/access';
import { RATE_LIMIT_COMMAND } from '@app/access';
import { REDIS } from '@app/redis';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';
import { eventually, HttpClient, HttpResponse } from '../../support/http';
import { expectErrorBody, expectRateLimitHeaders } from '../../support/expect-error';
import { TcpProxy } from '../../support/tcp-proxy';
import { TestClock } from '../../support/test-clock';
import { unissuedKey } from '../../support/keys';

const MINUTE = 60_000;
/** A chosen UTC minute boundary per test (distinct, so no two tests share a window). */
let nextMinute = Date.UTC(2031, 0, 1, 10, 0, 0);
const freshMinute = () => (nextMinute += 7 * MINUTE);

const n = (res: HttpResponse<any>, header: string) => Number(res.headers.get(header));
const remaining = (res: HttpResponse<any>) => n(res, 'x-ratelimit-remaining');

function burst(clients: HttpClient[], total: number, path = '/v1/account'): Promise<HttpResponse<any>[]> {
  return Promise.all(Array.from({ length: total }, (_, i) => clients[i % clients.length].get(path)));
}

describe('per-plan rate limiting', () => {
  const clock = new TestClock();
  let api: RunningApi;
  let api2: RunningApi;

  beforeAll(async () => {
    [api, api2] = await Promise.all([startApi({}, { clock }), startApi({}, { clock })]);
  });
  afterAll(async () => {
    await Promise.all([api?.close(), api2?.close()]);
  });

  describe('exact under concurrency', () => {
    it.each([
      ['one API process', 1],
      ['two API processes', 2],
    ])('a parallel burst of 75 on a Free account admits exactly 60 (%s)', async (_what, processes) => {
      clock.set(freshMinute() + 10_000);
      const { apiKey } = await createAccount(api, 'free');
      const clients = [api, api2].slice(0, processes).map((x) => new HttpClient(x.url, apiKey));
      const answers = await burst(clients, 75);

      const admitted = answers.filter((r) => r.status === 200);
      const refused = answers.filter((r) => r.status !== 200);
      expect(admitted).toHaveLength(60);
      expect(refused).toHaveLength(15);
      // Each admitted request saw a distinct count: 59, 58, ... 0 remaining, each once.
      expect(admitted.map(remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i));
      for (const r of refused) {
        expectErrorBody(r, 429, 'rate_limit_exceeded');
        expect(remaining(r)).toBe(0);
        expect(r.headers.get('retry-after')).toBe('50');
      }
      // Refused requests counted in neither window.
      const status = await clients[0].get('/v1/rate_limit');
      expect(status.body.minute).toEqual(expect.objectContaining({ used: 60, remaining: 0, limit: 60 }));
      expect(status.body.day).toEqual(expect.objectContaining({ used: 60, remaining: 940, limit: 1_000 }));
    });

    it('X-RateLimit-Remaining never rises inside a window (two processes, with peeks in between)', async () => {
      clock.set(freshMinute() + 1_000);
      const { apiKey } = await createAccount(api, 'free');
      const clients = [new HttpClient(api.url, apiKey), new HttpClient(api2.url, apiKey)];
      const seen: number[] = [];
      for (let i = 0; i < 64; i++) {
        const res = await clients[i % 2].get('/v1/keys');
        expectRateLimitHeaders(res);
        seen.push(remaining(res));
        if (i % 10 === 0) {
          // GET /rate_limit reports without counting: same remaining, and used unchanged.
          const peek = await clients[(i + 1) % 2].get('/v1/rate_limit');
          expect(peek.status).toBe(200);
          expect(remaining(peek)).toBe(seen[i]);
          expect(peek.body.minute.remaining).toBe(seen[i]);
        }
        clock.advance(100);
      }
      expect(seen.slice(0, 60)).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
      expect(seen.slice(60)).toEqual([0, 0, 0, 0]);
      for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeLessThanOrEqual(seen[i - 1]);
      // The next minute starts afresh.
      clock.set(Math.floor(clock.now().getTime() / MINUTE) * MINUTE + MINUTE);
      const next = await clients[0].get('/v1/keys');
      expect(next.status).toBe(200);
      expect(remaining(next)).toBe(59);
    });
  });

  it('sends the calls of one event-loop turn as one script call per account, applied in order', async () => {
    const limiter = api.app.get(PlanRateLimiter);
    const redis = api.app.get<Redis>(REDIS);
    const spy = jest.spyOn(redis, RATE_LIMIT_COMMAND);
    try {
      const now = freshMinute() + 5_000;
      const limits = { perMinute: 8, perDay: 1_000 };
      const subject = (account: number) => ({ bucket: `a:batch-${now}-${account}`, banKey: 'k1', plan: 'free' });
      // Same turn: 10 calls for one account, 3 for another, a peek in between.
      const calls = [
        ...Array.from({ length: 5 }, () => limiter.consume(subject(1), limits, now)),
        limiter.peek(subject(1), limits, now),
        ...Array.from({ length: 5 }, () => limiter.consume(subject(1), limits, now)),
        ...Array.from({ length: 3 }, () => limiter.consume(subject(2), limits, now)),
      ];
      const decisions = await Promise.all(calls);
      expect(spy).toHaveBeenCalledTimes(2);
      expect(decisions.map((d) => d.fallback)).not.toContain(true);
      // In order, as separate calls: 1..5 counted, the peek sees 5, then 6..8 and two refusals.
      expect(decisions.slice(0, 11).map((d) => [d.outcome, d.minute.used])).toEqual([
        ['admitted', 1],
        ['admitted', 2],
        ['admitted', 3],
        ['admitted', 4],
        ['admitted', 5],
        ['admitted', 5],
        ['admitted', 6],
        ['admitted', 7],
        ['admitted', 8],
        ['limited', 8],
        ['limited', 8],
      ]);
      expect(decisions.slice(11).map((d) => d.minute.used)).toEqual([1, 2, 3]);
      // A later turn is a new batch, and counts on from there.
      const later = await limiter.consume(subject(2), limits, now);
      expect(later.minute.used).toBe(4);
      expect(spy).toHaveBeenCalledTimes(3);
    } finally {
      spy.mockRestore();
    }
  });

  it("judges each call of a turn by its own limits when a subject's limits change between them", async () => {
    const limiter = api.app.get(PlanRateLimiter);
    const now = freshMinute() + 5_000;
    const subject = { bucket: `a:limits-${now}`, banKey: 'k1', plan: 'free' };
    const calls = [
      ...Array.from({ length: 3 }, () => limiter.consume(subject, { perMinute: 2, perDay: 1_000 }, now)),
      ...Array.from({ length: 2 }, () => limiter.consume(subject, { perMinute: 10, perDay: 1_000 }, now)),
    ];
    const decisions = await Promise.all(calls);
    expect(decisions.map((d) => [d.outcome, d.minute.used])).toEqual([
      ['admitted', 1],
      ['admitted', 2],
      ['limited', 2],
      ['admitted', 3],
      ['admitted', 4],
    ]);
  });

  it('splits a turn of more than MAX_BATCH calls of one account into several script calls, still in order', async () => {
    const limiter = api.app.get(PlanRateLimiter);
    const spy = jest.spyOn(api.app.get<Redis>(REDIS), RATE_LIMIT_COMMAND);
    try {
      const now = freshMinute() + 5_000;
      const subject = { bucket: `a:split-${now}`, banKey: 'k1', plan: 'free' };
      const total = MAX_BATCH * 2 + 7;
      const decisions = await Promise.all(
        Array.from({ length: total }, () => limiter.consume(subject, { perMinute: 10_000, perDay: 10_000 }, now)),
      );
      expect(spy).toHaveBeenCalledTimes(3);
      expect(decisions.map((d) => d.minute.used)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    } finally {
      spy.mockRestore();
    }
  });

  describe('headers and Retry-After', () => {
    it('Retry-After is exact (whole seconds, rounded up, until the refusing minute resets) at several points', async () => {
      const start = freshMinute();
      clock.set(start + 200);
      const { apiKey } = await createAccount(api, 'free');
      const http = new HttpClient(api.url, apiKey);
      const admitted = await burst([http], 60);
      expect(admitted.every((r) => r.status === 200)).toBe(true);

      for (const [offset, expected] of [
        [200, 60],
        [999, 60],
        [1_000, 59],
        [15_000, 45],
        [30_200, 30],
        [59_001, 1],
        [59_999, 1],
      ]) {
        clock.set(start + offset);
        const res = await http.get('/v1/account');
        expectErrorBody(res, 429, 'rate_limit_exceeded');
        expect({ offset, retryAfter: res.headers.get('retry-after') }).toEqual({
          offset,
          retryAfter: String(expected),
        });
        expect(n(res, 'x-ratelimit-reset')).toBe((start + MINUTE) / 1000);
        expect(res.headers.get('x-ratelimit-resource')).toBe('minute');
        expect(res.headers.get('ratelimit')).toBe(`"minute";r=0;t=${expected}`);
        expect((start + offset) / 1000 + expected).toBeGreaterThanOrEqual(n(res, 'x-ratelimit-reset'));
      }
      clock.set(start + MINUTE);
      const next = await http.get('/v1/account');
      expect(next.status).toBe(200);
      expect(next.headers.get('retry-after')).toBeNull();
    });

    it('describes both windows in both formats from the same decision', async () => {
      const start = freshMinute();
      clock.set(start + 12_345);
      const { apiKey } = await createAccount(api, 'pro');
      const res = await new HttpClient(api.url, apiKey).get('/v1/account');
      expect(res.status).toBe(200);
      expect(Object.fromEntries([...res.headers].filter(([h]) => /ratelimit/i.test(h)))).toEqual({
        'x-ratelimit-limit': '300',
        'x-ratelimit-remaining': '299',
        'x-ratelimit-used': '1',
        'x-ratelimit-reset': String((start + MINUTE) / 1000),
        'x-ratelimit-resource': 'minute',
        'ratelimit-policy': '"minute";q=300;w=60, "day";q=10000;w=86400',
        ratelimit: '"minute";r=299;t=48',
      });
    });

    it('every error answer (400, 401, 403, 404, 413, 429, 503) carries the headers', async () => {
      clock.set(freshMinute());
      const { accountId, apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 4, limitPerDay: 100 });
      const http = new HttpClient(api.url, apiKey);
      const ro = (await http.post('/v1/keys', { name: 'ro', scopes: ['read'] })).body.secret as string;
      // Four requests a minute: the clock moves on before each group of four.
      const answers: [HttpResponse, number, string][] = [
        [
          await http.request('POST', '/v1/keys', { rawBody: '{', headers: { 'Content-Type': 'application/json' } }),
          400,
          'invalid_json',
        ],
        [await http.post('/v1/keys', { name: 'x', scopes: ['root'] }), 400, 'validation_failed'],
        [await http.delete('/v1/keys/x'), 400, 'invalid_parameter'],
      ];
      clock.advance(MINUTE);
      answers.push(
        [await http.post('/v1/keys', { name: 'x'.repeat(api.config.bodyLimitBytes) }), 413, 'payload_too_large'],
        [await http.get('/v1/nope'), 404, 'not_found'],
        [await http.delete('/v1/keys/99999999'), 404, 'not_found'],
      );
      clock.advance(MINUTE);
      answers.push(
        [await http.post('/v1/keys', { name: 'w' }, { key: ro }), 403, 'insufficient_scope'],
        [await new HttpClient(api.url).get('/v1/account'), 401, 'missing_api_key'],
        [await http.get('/v1/account', { headers: { Authorization: 'Basic x' } }), 401, 'invalid_authorization'],
        [await http.get('/v1/account', { key: 'pst_nope' }), 401, 'invalid_api_key'],
        [await http.get('/v1/account'), 200, ''],
        [await http.get('/v1/account'), 200, ''],
        [await http.get('/v1/account'), 200, ''],
        [await http.get('/v1/account'), 429, 'rate_limit_exceeded'],
      );
      for (const [res, status, code] of answers) {
        if (status !== 200) expectErrorBody(res, status, code);
        expectRateLimitHeaders(res);
      }

      // 503: Postgres unreachable, for a key this replica caches, one it knows from the keys shared
      // in Redis (ro: primed when issued), and one that needs a Postgres lookup.
      const proxy = await TcpProxy.inFrontOf(api.config.databaseUrl);
      const broken = await startApi({ DATABASE_URL: proxy.url });
      try {
        const onBroken = new HttpClient(broken.url, apiKey);
        await broken.app.get(AccountsService).get(accountId); // the pool works through the proxy
        expect((await onBroken.get('/v1/keys')).status).toBe(200);
        await proxy.stop();
        const keys = [undefined, ro, unissuedKey()];
        for (const res of await Promise.all(keys.map((key) => onBroken.get('/v1/account', { key })))) {
          expectErrorBody(res, 503, 'service_unavailable');
          expectRateLimitHeaders(res);
        }
      } finally {
        await broken.close();
        await proxy.stop();
      }
    });

    it('GET /rate_limit reports both windows and the ban state, and does not count', async () => {
      const start = freshMinute();
      clock.set(start + 500);
      const { apiKey } = await createAccount(api, 'business');
      const http = new HttpClient(api.url, apiKey);
      await burst([http], 5);
      for (let i = 0; i < 5; i++) {
        const res = await http.get('/v1/rate_limit');
        expect(res.status).toBe(200);
        expectRateLimitHeaders(res);
        expect(res.body).toEqual({
          minute: { name: 'minute', limit: 1_000, used: 5, remaining: 995, reset: (start + MINUTE) / 1000 },
          day: { name: 'day', limit: 100_000, used: 5, remaining: 99_995, reset: Date.UTC(2031, 0, 2) / 1000 },
          banned: false,
          banSecondsLeft: null,
        });
      }
    });
  });

  it('the day window refuses at its limit and resets at UTC midnight (injected clock)', async () => {
    const midnight = Date.UTC(2031, 5, 10);
    clock.set(midnight - 30_000 + 250); // 23:59:30.250
    const { apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 1_000, limitPerDay: 5 });
    const http = new HttpClient(api.url, apiKey);
    const left: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await http.get('/v1/account');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-resource')).toBe('day');
      left.push(remaining(res));
    }
    expect(left).toEqual([4, 3, 2, 1, 0]);

    const refused = await http.get('/v1/account');
    expectErrorBody(refused, 429, 'rate_limit_exceeded');
    expect(refused.headers.get('x-ratelimit-resource')).toBe('day');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(String(midnight / 1000));
    expect(refused.headers.get('retry-after')).toBe('30');

    clock.set(midnight - 1); // 23:59:59.999: a new minute, same day: still refused
    const stillRefused = await http.get('/v1/account');
    expectErrorBody(stillRefused, 429, 'rate_limit_exceeded');
    expect(stillRefused.headers.get('retry-after')).toBe('1');

    clock.set(midnight);
    const nextDay = await http.get('/v1/account');
    expect(nextDay.status).toBe(200);
    expect(remaining(nextDay)).toBe(4);
    expect(nextDay.headers.get('x-ratelimit-reset')).toBe(String((midnight + 86_400_000) / 1000));
  });

  it('a plan change reaches every API process within 1 s', async () => {
    clock.set(freshMinute());
    const { accountId, apiKey } = await createAccount(api, 'business');
    const on2 = new HttpClient(api2.url, apiKey);
    expect((await on2.get('/v1/account')).headers.get('x-ratelimit-limit')).toBe('1000');
    await api.app.get(AccountsService).setPlan(accountId, 'free');
    const started = Date.now();
    await eventually(async () => (await on2.get('/v1/account')).headers.get('x-ratelimit-limit') === '60', 3_000, 20);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await on2.get('/v1/account')).body.plan).toBe('free');
  });

  it('callers without a valid key are limited per client address with the Free figures; X-Forwarded-For is trusted one hop only', async () => {
    clock.set(freshMinute());
    const anon = new HttpClient(api.url);
    const answers = await burst([anon], 60);
    expect(answers.every((r) => r.status === 401)).toBe(true);
    expect(answers.map(remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expectErrorBody(await anon.get('/v1/account'), 429, 'rate_limit_exceeded');
    // A forged left-most entry does not make a new client: the proxy appended the real one.
    const forged = await anon.get('/v1/account', { headers: { 'X-Forwarded-For': `203.0.113.9, ${anon.clientIp}` } });
    expectErrorBody(forged, 429, 'rate_limit_exceeded');
    // Another address has its own budget.
    const other = await new HttpClient(api.url).get('/v1/account');
    expectErrorBody(other, 401, 'missing_api_key');
    expect(remaining(other)).toBe(59);
  });

  describe('bans', () => {
    let banApi: RunningApi;
    const banClock = new TestClock();
    beforeAll(async () => {
      banApi = await startApi({ RATE_LIMIT_BAN_STRIKES: '3', RATE_LIMIT_BAN_SECONDS: '2' }, { clock: banClock });
    });
    afterAll(() => banApi?.close());

    it('start at the threshold, answer api_key_banned with the seconds left, hit only that key, and end on time', async () => {
      banClock.set(freshMinute());
      const { accountId, apiKey } = await createAccount(banApi, 'enterprise', { limitPerMinute: 3, limitPerDay: 100 });
      const k1 = new HttpClient(banApi.url, apiKey);
      const k2 = new HttpClient(banApi.url, (await k1.post('/v1/keys', { name: 'second' })).body.secret);
      const bystander = new HttpClient(banApi.url, (await createAccount(banApi, 'free')).apiKey);
      expect((await k1.get('/v1/account')).status).toBe(200);
      expect((await k1.get('/v1/account')).status).toBe(200); // 3 of 3 used

      // Refusals within a second of the first 429 (a parallel burst, in flight) are not strikes.
      const inFlight = await burst([k1], 8);
      expect(inFlight.map((r) => r.body.code)).toEqual(Array(8).fill('rate_limit_exceeded'));
      // From a second on, each is a strike; the third strike bans (STRIKES=3).
      banClock.advance(1_000);
      const codes: string[] = [];
      for (let i = 0; i < 3; i++) codes.push((await k1.get('/v1/account')).body.code);
      expect(codes).toEqual(['rate_limit_exceeded', 'rate_limit_exceeded', 'api_key_banned']);
      const bannedAt = Date.now();

      const banned = await k1.get('/v1/account');
      expectErrorBody(banned, 429, 'api_key_banned');
      expectRateLimitHeaders(banned);
      expect(banned.headers.get('retry-after')).toBe('2');

      // Only that key: the account's other key is limited, not banned; other accounts are untouched.
      expectErrorBody(await k2.get('/v1/account'), 429, 'rate_limit_exceeded');
      expect((await bystander.get('/v1/account')).status).toBe(200);

      // GET /rate_limit still answers the banned key and says so, without a Retry-After on its 200.
      const status = await k1.get('/v1/rate_limit');
      expect(status.status).toBe(200);
      expect(status.body).toEqual(expect.objectContaining({ banned: true, banSecondsLeft: expect.any(Number) }));
      expect(status.body.banSecondsLeft).toBeGreaterThanOrEqual(1);
      expect(status.body.banSecondsLeft).toBeLessThanOrEqual(2);
      expect(status.headers.get('retry-after')).toBeNull();

      // Still banned a little before the end, then not any more (the minute is still full: a plain 429).
      await new Promise((r) => setTimeout(r, Math.max(0, bannedAt + 1_500 - Date.now())));
      const late = await k1.get('/v1/account');
      expectErrorBody(late, 429, 'api_key_banned');
      expect(late.headers.get('retry-after')).toBe('1');
      await eventually(async () => (await k1.get('/v1/account')).body.code === 'rate_limit_exceeded', 2_000, 25);
      const endedAfter = Date.now() - bannedAt;
      expect(endedAfter).toBeGreaterThanOrEqual(1_900);
      expect(endedAfter).toBeLessThan(2_600);

      // In a new minute the key works again.
      banClock.advance(MINUTE);
      expect((await k1.get('/v1/account')).status).toBe(200);

      const events = await banApi.app
        .get(DataSource)
        .query(`SELECT resource_id FROM events WHERE account_id = $1 AND type = 'api_key.banned'`, [accountId]);
      expect(events).toHaveLength(1);
    });
  });

  describe('Redis unreachable', () => {
    it('keeps answering with a per-process fallback, logs once per outage, exposes a metric, and returns to Redis by itself', async () => {
      const proxy = await TcpProxy.inFrontOf(api.config.redisUrl);
      const fallbackClock = new TestClock();
      fallbackClock.set(freshMinute());
      const degraded = await startApi({ REDIS_URL: proxy.url }, { clock: fallbackClock });
      const logFile = degraded.config.logFile as string;
      const logFrom = (await stat(logFile)).size;
      const logSince = async () => (await readFile(logFile, 'utf8')).slice(logFrom);
      const metric = async () =>
        /^petstore_rate_limit_fallback_active (\d)$/m.exec(
          (await new HttpClient(degraded.metricsUrl).get('/metrics')).text,
        )?.[1];
      try {
        await eventually(async () => (await new HttpClient(degraded.url).get('/health/ready')).status === 200);
        const { apiKey } = await createAccount(degraded, 'free');
        const http = new HttpClient(degraded.url, apiKey);
        for (let i = 0; i < 3; i++) expect((await http.get('/v1/account')).status).toBe(200);
        expect(await metric()).toBe('0');

        await proxy.stop();
        // Per process, same windows: a fresh budget here, still 60 a minute.
        const during = [];
        for (let i = 0; i < 62; i++) during.push(await http.get('/v1/account'));
        expect(during.slice(0, 60).every((r) => r.status === 200)).toBe(true);
        expect(during.slice(0, 60).map(remaining)).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
        for (const r of during.slice(60)) {
          expectErrorBody(r, 429, 'rate_limit_exceeded');
          expectRateLimitHeaders(r);
        }
        expect(await metric()).toBe('1');
        const logged = await eventually(async () => {
          const text = await logSince();
          return text.includes('Redis unreachable') ? text : null;
        });
        expect(logged.match(/Redis unreachable: rate limiting per process/g)).toHaveLength(1);

        await proxy.restart();
        // Back on Redis: the shared counters (3 used before the outage) answer again.
        const back = await eventually(
          async () => {
            const r = await http.get('/v1/rate_limit');
            return r.status === 200 && r.body.minute.used === 3 ? r : null;
          },
          10_000,
          100,
        );
        expect(back.body.minute.remaining).toBe(57);
        expect(await metric()).toBe('0');
        expect(remaining(await http.get('/v1/account'))).toBe(56);
        const after = await eventually(async () => {
          const text = await logSince();
          return text.includes('Redis reachable again') ? text : null;
        });
        expect(after.match(/Redis unreachable: rate limiting per process/g)).toHaveLength(1);
        expect(after.match(/Redis reachable again/g)).toHaveLength(1);
      } finally {
        await degraded.close();
        await proxy.stop();
      }
    });
  });
});
