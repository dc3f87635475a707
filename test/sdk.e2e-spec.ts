import { randomInt } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PetstoreClient, PetstoreError } from '@petstore/client';
import { createAccount, RunningApi, startApi } from './support/test-apps';

/** A per-test client address: the test apps trust X-Forwarded-For, so per-address limits stay per test. */
const clientIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

describe('SDK (packages/client) against the live API', () => {
  let api: RunningApi;
  let db: DataSource;
  let client: PetstoreClient;
  let categoryId: number;
  let apiKey: string;

  const sdk = (apiKey: string, extra: Partial<ConstructorParameters<typeof PetstoreClient>[0]> = {}) =>
    new PetstoreClient({ apiKey, baseUrl: api.url, headers: { 'X-Forwarded-For': clientIp() }, ...extra });

  beforeAll(async () => {
    api = await startApi();
    db = api.app.get(DataSource);
    const account = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    apiKey = account.apiKey;
    client = sdk(apiKey);
    categoryId = (await client.categories.create({ name: `sdk-${Date.now()}` })).id;
  });
  afterAll(() => api.close());

  it('creates and reads a pet with typed models', async () => {
    const pet = await client.pets.create({ name: 'Rex', categoryId });
    expect(await client.pets.get(pet.id)).toEqual(pet);
  });

  it('exposes the rate-limit state of the last answer', async () => {
    await client.account.get();
    const first = client.rateLimit!;
    await client.account.get();
    expect(first).toEqual(expect.objectContaining({ limit: 100_000, resource: 'minute' }));
    expect(client.rateLimit!.remaining).toBe(first.remaining - 1);
    expect(client.rateLimit!.reset.getTime()).toBeGreaterThan(Date.now() - 1000);
  });

  it("reads the account's usage history, typed, with the plan's limits", async () => {
    const own = sdk((await createAccount(api, 'pro')).apiKey);
    await own.account.get();
    const usage = await own.account.usage({ granularity: 'hour' });
    expect(usage.limits).toEqual({ perMinute: 300, perDay: 10_000 });
    expect(Date.parse(usage.buckets.at(-1)!.start)).toBe(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    expect(usage.buckets.at(-1)).toEqual(expect.objectContaining({ admitted: 1, refused: 0, bans: 0 }));
  });

  it('rotates a key: the new secret works at once', async () => {
    const own = sdk((await createAccount(api, 'pro')).apiKey);
    const extra = await own.keys.create({ name: 'to rotate' });
    const rotated = await own.keys.rotate(extra.id, { gracePeriodSeconds: 0 });
    expect(rotated.name).toBe('to rotate');
    expect((await sdk(rotated.secret).account.get()).plan).toBe('pro');
  });

  it('iterates every item of a keyset listing by following Link: rel="next"', async () => {
    const names = ['a', 'b', 'c', 'd', 'e'].map((n) => `page-${n}-${Date.now()}`);
    const ids = [];
    for (const name of names) ids.push((await client.pets.create({ name, categoryId })).id);
    const seen = [];
    for await (const pet of client.pets.list({ categoryId, limit: 2 })) seen.push(pet.id);
    expect(seen).toEqual(expect.arrayContaining(ids));
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it('throws PetstoreError with code, status, details and request id', async () => {
    const err = await client.categories.create({ name: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PetstoreError);
    expect(err).toEqual(expect.objectContaining({ code: 'validation_failed', status: 400 }));
    expect((err as PetstoreError).details).toEqual([expect.objectContaining({ field: 'name' })]);
    expect((err as PetstoreError).requestId).toEqual(expect.any(String));
  });

  it('retries a lost answer after Retry-After with the same Idempotency-Key, so the order is placed once', async () => {
    const pet = await client.pets.create({ name: 'Once', categoryId });
    const attempts: { key: string | null; at: number }[] = [];
    // A gateway outside the service: the first order reaches the API, its answer is replaced by a 503.
    const lossy: typeof fetch = async (input, init) => {
      const real = await fetch(input, init);
      if (!String(input).endsWith('/v1/store/orders')) return real;
      attempts.push({ key: new Headers(init?.headers).get('idempotency-key'), at: Date.now() });
      if (attempts.length > 1) return real;
      await real.text();
      return Response.json(
        { code: 'service_unavailable', message: 'gateway', status: 503 },
        { status: 503, headers: { 'Retry-After': '1' } },
      );
    };
    const shipDate = new Date(Date.now() + 3_600_000).toISOString();
    const order = await sdk(apiKey, { fetch: lossy }).orders.place({ petId: pet.id, quantity: 1, shipDate });
    expect(attempts).toHaveLength(2);
    expect(attempts[0].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(attempts[1].key).toBe(attempts[0].key);
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(1000);
    const orders = await db.query('SELECT id::int AS id FROM orders WHERE pet_id = $1', [pet.id]);
    expect(orders).toEqual([{ id: order.id }]);
  });

  it('does not wait for a Retry-After longer than maxRetryDelayMs: the 429 is thrown with it', async () => {
    const limited = await createAccount(api, 'enterprise', { limitPerMinute: 1, limitPerDay: 1_000 });
    const impatient = sdk(limited.apiKey, { maxRetryDelayMs: 100 });
    await impatient.account.get();
    const started = Date.now();
    const err = (await impatient.account.get().catch((e: unknown) => e)) as PetstoreError;
    expect(err).toEqual(expect.objectContaining({ code: 'rate_limit_exceeded', status: 429 }));
    expect(err.retryAfter).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(impatient.rateLimit!.remaining).toBe(0);
  });
});
