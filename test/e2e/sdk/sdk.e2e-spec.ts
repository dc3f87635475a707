import { randomInt } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PetstoreClient, PetstoreError } from '@petstore/client';
import { createAccount, ROOMY_LIMITS, RunningApi, startApiWithAccount } from '../../support/test-apps';

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
    ({ api, apiKey } = await startApiWithAccount('enterprise', ROOMY_LIMITS));
    db = api.app.get(DataSource);
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

  it('has a method for the 3 operations it lacked: categories.update, inventory.update, pets.getById', async () => {
    const category = await client.categories.create({ name: `rename-${Date.now()}` });
    expect(await client.categories.update(category.id, { name: `${category.name}-2` })).toEqual(
      expect.objectContaining({ id: category.id, name: `${category.name}-2` }),
    );
    const pet = await client.pets.create({ name: 'Stock', categoryId });
    expect(await client.inventory.update(pet.id, { quantity: 7 })).toEqual(
      expect.objectContaining({ petId: pet.id, quantity: 7 }),
    );
    expect(await client.pets.getById(pet.id)).toEqual(expect.objectContaining({ id: pet.id, name: 'Stock' }));
  });

  it('reaches any operation by path and method with typed filters: call() and list()', async () => {
    const pet = await client.pets.create({ name: `typed-${Date.now()}`, categoryId, status: 'sold' });
    const { data, headers } = await client.call('GET', '/pets/{petId}', { path: { petId: pet.id } });
    expect(data.status).toBe('sold');
    expect(headers.get('etag')).toEqual(expect.any(String));
    const sold = [];
    for await (const p of client.list('/pets', { query: { categoryId, status: 'sold', limit: 1 } })) sold.push(p.id);
    expect(sold).toContain(pet.id);
    // @ts-expect-error `lost` is not a PetStatus: the filters are typed from openapi.json.
    await expect(client.call('GET', '/pets', { query: { status: 'lost' } })).rejects.toMatchObject({ status: 400 });
  });

  /** A fetch in front of the real one: `answer` may replace an attempt's answer (as a proxy would). */
  const proxied = (answer: (attempt: number, url: URL) => Response | Promise<Response> | undefined) => {
    const urls: URL[] = [];
    const proxyFetch: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      urls.push(url);
      return (await answer(urls.length, url)) ?? fetch(input, init);
    };
    return { urls, proxyFetch };
  };
  const html = (status: number, headers: Record<string, string> = {}) =>
    new Response(
      `<html>\n<head><title>${status}</title></head>\n<body><h1>${status} from the proxy</h1>${'<p>padding</p>'.repeat(50)}</body></html>`,
      {
        status,
        headers: { 'Content-Type': 'text/html', ...headers },
      },
    );

  it("turns a proxy's HTML 503 into a PetstoreError and retries it (Retry-After honoured), as 502 and 504 on a GET", async () => {
    for (const status of [503, 502, 504]) {
      const { urls, proxyFetch } = proxied((attempt) =>
        attempt === 1 ? html(status, { 'Retry-After': '0' }) : undefined,
      );
      expect((await sdk(apiKey, { fetch: proxyFetch }).account.get()).plan).toBe('enterprise');
      expect(urls).toHaveLength(2);
    }
    const { urls, proxyFetch } = proxied(() => html(503));
    const err = (await sdk(apiKey, { fetch: proxyFetch, maxRetries: 1 })
      .account.get()
      .catch((e: unknown) => e)) as PetstoreError;
    expect(err).toBeInstanceOf(PetstoreError);
    expect(err).toEqual(expect.objectContaining({ code: 'service_unavailable', status: 503 }));
    expect(err.message).toMatch(/^HTTP 503: <html> <head><title>503<\/title>.*…$/);
    expect(err.message.length).toBeLessThan(300);
    expect(urls).toHaveLength(2);
  });

  it('does not repeat a POST without Idempotency-Key after a 504 (the work may be done): the error is thrown', async () => {
    const { urls, proxyFetch } = proxied(() => html(504));
    const err = await sdk(apiKey, { fetch: proxyFetch })
      .webhooks.test(1)
      .catch((e: unknown) => e);
    expect(err).toEqual(expect.objectContaining({ code: 'gateway_timeout', status: 504 }));
    expect(urls).toHaveLength(1);
  });

  it("follows Link only on the base URL's origin: a Link elsewhere throws before the key is sent there", async () => {
    for (const name of ['x', 'y']) await client.pets.create({ name: `${name}-${Date.now()}`, categoryId });
    const { urls, proxyFetch } = proxied(async (_, url) => {
      if (url.origin !== new URL(api.url).origin)
        return new Response('[]', { headers: { 'Content-Type': 'application/json' } });
      const real = await fetch(url, { headers: { Authorization: `Bearer ${apiKey}` } });
      const link = real.headers.get('link')!.replace('</v1/', '<https://collector.example/v1/');
      return new Response(await real.text(), {
        status: real.status,
        headers: { 'Content-Type': 'application/json', Link: link },
      });
    });
    const seen: unknown[] = [];
    const err = await (async () => {
      for await (const pet of sdk(apiKey, { fetch: proxyFetch }).pets.list({ categoryId, limit: 1 })) seen.push(pet);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PetstoreError);
    expect(err).toEqual(expect.objectContaining({ code: 'cross_origin_link', status: 200 }));
    expect(seen).toHaveLength(1);
    expect(urls.map((u) => u.origin)).toEqual([new URL(api.url).origin]);
  });

  /** A fetch whose answer never comes, unless the signal it is given aborts it. */
  const hanging = () => {
    const attempts: AbortSignal[] = [];
    const hangFetch: typeof fetch = (_, init) =>
      new Promise((_resolve, reject) => {
        attempts.push(init!.signal!);
        init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason));
      });
    return { attempts, hangFetch };
  };

  it('gives up an attempt after the timeout (client default, or per call), retrying it only where safe', async () => {
    const { attempts, hangFetch } = hanging();
    const slow = sdk(apiKey, { fetch: hangFetch, timeout: 100, maxRetries: 1 });
    let started = Date.now();
    await expect(slow.account.get()).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(attempts).toHaveLength(2); // a GET is retried once
    expect(Date.now() - started).toBeLessThan(2_000);
    started = Date.now();
    await expect(slow.categories.delete(1, { timeout: 50 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(attempts).toHaveLength(3); // a DELETE is not
    expect(Date.now() - started).toBeLessThan(1_000);
  }, 10_000);

  it('stops a call, its retries and its waits at once when its AbortSignal aborts', async () => {
    const { attempts, hangFetch } = hanging();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await expect(sdk(apiKey, { fetch: hangFetch }).account.get({ signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(attempts).toHaveLength(1);
    // Aborted while waiting out a Retry-After of 20 s.
    const { urls, proxyFetch } = proxied(() => html(503, { 'Retry-After': '20' }));
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(), 100);
    await expect(sdk(apiKey, { fetch: proxyFetch }).account.get({ signal: waiting.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(urls).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2_000);
  }, 10_000);
});
