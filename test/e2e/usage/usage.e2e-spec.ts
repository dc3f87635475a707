import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiKeysService } from '@app/access';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { eventually, HttpClient, HttpResponse } from '../../support/http';
import { expectErrorBody } from '../../support/expect-error';
import { TestClock } from '../../support/test-clock';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** A UTC hour of its own per test (future, so no other test's counters share it), 10 minutes in. */
let nextHour = Date.UTC(2033, 0, 1, 0, 0, 0) + Math.floor(Math.random() * 1_000) * 24 * HOUR;
const freshInstant = () => (nextHour += 5 * HOUR) + 10 * MINUTE + 5_000;

interface Bucket {
  start: string;
  admitted: number;
  refused: number;
  bans: number;
}
const totals = (buckets: Bucket[]) =>
  buckets.reduce(
    (t, b) => ({ admitted: t.admitted + b.admitted, refused: t.refused + b.refused, bans: t.bans + b.bans }),
    {
      admitted: 0,
      refused: 0,
      bans: 0,
    },
  );
const ok = (answers: HttpResponse[]) => answers.filter((r) => r.status === 200).length;

describe('usage history (GET /v1/usage)', () => {
  const clock = new TestClock();
  let api: RunningApi;
  let api2: RunningApi;
  let worker: INestApplicationContext;

  beforeAll(async () => {
    const env = { RATE_LIMIT_BAN_STRIKES: '2', RATE_LIMIT_BAN_SECONDS: '600', USAGE_AGGREGATION_INTERVAL_MS: '300' };
    [api, api2] = await Promise.all([startApi(env, { clock }), startApi(env, { clock })]);
    worker = await startWorker(env, { clock });
  });
  afterAll(() => closeAll([() => worker?.close(), () => api?.close(), () => api2?.close()]));

  /** An account limited to `perDay` requests a day, with two keys (the second made without a request). */
  async function account(perDay: number, perMinute = 1_000) {
    const { accountId, apiKey, keyId } = await createAccount(api, 'enterprise', {
      limitPerMinute: perMinute,
      limitPerDay: perDay,
    });
    const second = await api.app.get(ApiKeysService).create(accountId, { name: 'second', scopes: ['read', 'write'] });
    return {
      accountId,
      k1: { id: keyId, on: [new HttpClient(api.url, apiKey), new HttpClient(api2.url, apiKey)] },
      k2: { id: second.id, on: [new HttpClient(api.url, second.secret), new HttpClient(api2.url, second.secret)] },
    };
  }

  const usage = (client: HttpClient, query: string) =>
    client.get<{ buckets: Bucket[] } & Record<string, unknown>>(`/v1/usage?${query}`);

  it("counts each key's admitted and refused requests exactly across two API processes", async () => {
    const at = freshInstant();
    clock.set(at);
    const { k1, k2 } = await account(12);
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? k1 : k2).on[Math.floor(i / 2) % 2].get('/v1/account')),
    );
    const k1Answers = burst.filter((_, i) => i % 2);
    const k2Answers = burst.filter((_, i) => i % 2 === 0);
    expect(ok(burst)).toBe(12);

    const from = new Date(at - 5 * MINUTE).toISOString();
    const [all, one, two] = await Promise.all([
      usage(k1.on[0], `granularity=minute&from=${from}`),
      usage(k1.on[1], `granularity=minute&from=${from}&keyId=${k1.id}`),
      usage(k2.on[0], `granularity=minute&from=${from}&keyId=${k2.id}`),
    ]);
    expect(all.status).toBe(200);
    expect(totals(all.body.buckets)).toEqual({ admitted: 12, refused: 28, bans: 0 });
    expect(totals(one.body.buckets)).toEqual({ admitted: ok(k1Answers), refused: 20 - ok(k1Answers), bans: 0 });
    expect(totals(two.body.buckets)).toEqual({ admitted: ok(k2Answers), refused: 20 - ok(k2Answers), bans: 0 });
  });

  it("puts the counts in the bucket of the request's minute, with the plan's limits alongside", async () => {
    const at = freshInstant();
    clock.set(at);
    const { k1 } = await account(100, 50);
    await Promise.all([k1.on[0].get('/v1/account'), k1.on[1].get('/v1/account')]);

    const res = await usage(k1.on[0], `granularity=minute&from=${new Date(at - 2 * MINUTE).toISOString()}`);
    const minute = Math.floor(at / MINUTE) * MINUTE;
    expect(res.body).toEqual(
      expect.objectContaining({
        granularity: 'minute',
        plan: 'enterprise',
        limits: { perMinute: 50, perDay: 100 },
        keyId: null,
      }),
    );
    expect(res.body.buckets.map((b) => b.start)).toEqual(
      [minute - 2 * MINUTE, minute - MINUTE, minute].map((t) => new Date(t).toISOString()),
    );
    expect(res.body.buckets[2]).toEqual({ start: new Date(minute).toISOString(), admitted: 2, refused: 0, bans: 0 });
  });

  it('counts the request that begins a ban once as a ban', async () => {
    const at = freshInstant();
    clock.set(at);
    const { k1 } = await account(1_000, 2);
    const client = k1.on[0];
    await client.get('/v1/account');
    await client.get('/v1/account'); // 2 of 2
    expect((await client.get('/v1/account')).status).toBe(429); // the first refusal
    clock.advance(1_000); // from now on each refusal is a strike; the second bans (STRIKES=2)
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await client.get('/v1/account')).body.code);
    expect(codes).toEqual(['rate_limit_exceeded', 'api_key_banned', 'api_key_banned']);

    const res = await usage(client, `granularity=hour&from=${new Date(at - HOUR).toISOString()}`);
    expect(totals(res.body.buckets)).toEqual({ admitted: 2, refused: 4, bans: 1 });
  });

  it('is not counted itself, and answers a key that is over its limit', async () => {
    const at = freshInstant();
    clock.set(at);
    const { k1 } = await account(1);
    await k1.on[0].get('/v1/account');
    expect((await k1.on[0].get('/v1/account')).status).toBe(429);

    for (let i = 0; i < 3; i++) expect((await usage(k1.on[i % 2], 'granularity=day')).status).toBe(200);
    expect(totals((await usage(k1.on[0], 'granularity=day')).body.buckets)).toEqual({
      admitted: 1,
      refused: 1,
      bans: 0,
    });
  });

  it('serves finished minutes from Postgres once the worker has copied them, at every granularity', async () => {
    const at = freshInstant();
    clock.set(at);
    const { accountId, k1, k2 } = await account(1_000);
    await Promise.all([k1.on[0].get('/v1/account'), k1.on[1].get('/v1/account'), k2.on[1].get('/v1/account')]);

    // Two minutes on, the worker copies the finished minute (USAGE_AGGREGATION_INTERVAL_MS=300).
    clock.set(at + 2 * MINUTE);
    const db = api.app.get(DataSource);
    const copied = await eventually(async () => {
      const rows = await db.query(
        `SELECT key_id::int, admitted FROM usage_hours WHERE account_id = $1 ORDER BY key_id`,
        [accountId],
      );
      return rows.length === 2 && rows;
    });
    expect(copied).toEqual([
      { key_id: k1.id, admitted: 2 },
      { key_id: k2.id, admitted: 1 },
    ]);

    // Two hours on, that minute is before the live window: only Postgres can answer it.
    clock.set(Math.floor(at / HOUR) * HOUR + 2 * HOUR + MINUTE);
    const from = new Date(at - HOUR).toISOString();
    for (const granularity of ['minute', 'hour', 'day']) {
      const res = await usage(k1.on[0], `granularity=${granularity}&from=${from}`);
      expect({ granularity, ...totals(res.body.buckets) }).toEqual({ granularity, admitted: 3, refused: 0, bans: 0 });
    }
    const mine = await usage(k1.on[1], `granularity=minute&from=${from}&keyId=${k1.id}`);
    expect(totals(mine.body.buckets).admitted).toBe(2);
  });

  it('refuses a range of more than 1,500 buckets with invalid_range', async () => {
    clock.set(freshInstant());
    const { k1 } = await account(1_000);
    const res = await usage(
      k1.on[0],
      `granularity=minute&from=${new Date(clock.nowMs() - 2 * 86_400_000).toISOString()}`,
    );
    expectErrorBody(res, 422, 'invalid_range');
  });

  it('refuses a `from` that is not before `to` with invalid_range', async () => {
    clock.set(freshInstant());
    const { k1 } = await account(1_000);
    const at = new Date(clock.nowMs()).toISOString();
    expectErrorBody(await usage(k1.on[0], `from=${at}&to=${at}`), 422, 'invalid_range');
  });

  it("answers 404 for another account's key", async () => {
    clock.set(freshInstant());
    const [{ k1 }, other] = await Promise.all([account(1_000), account(1_000)]);
    expectErrorBody(await usage(k1.on[0], `keyId=${other.k1.id}`), 404, 'not_found');
  });
});
