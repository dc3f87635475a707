import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createAccount, ROOMY_LIMITS, RunningApi, startApi, startApiWithAccount } from '../../support/test-apps';
import { HttpClient, HttpResponse, eventually } from '../../support/http';
import { TcpProxy } from '../../support/tcp-proxy';
import { expectErrorBody } from '../../support/expect-error';

const replayed = (res: HttpResponse) => res.headers.get('idempotent-replayed');

describe('Idempotency-Key on creating POSTs', () => {
  let api: RunningApi;
  let http: HttpClient;
  let accountId: number;
  let db: DataSource;

  beforeAll(async () => {
    ({ api, http, accountId } = await startApiWithAccount('enterprise', ROOMY_LIMITS));
    db = api.app.get(DataSource);
  });
  afterAll(() => api.close());

  const postMessage = (message: string, key: string, client = http) =>
    client.post('/v1/messages', { message }, { headers: { 'Idempotency-Key': key } });
  const countMessages = async (text: string): Promise<number> =>
    (await db.query('SELECT count(*)::int AS n FROM messages WHERE message = $1', [text]))[0].n;

  it('replays the first answer (status, body, Location) with Idempotent-Replayed: true, doing the work once', async () => {
    const key = randomUUID();
    const first = await postMessage('replay me', key);
    expect(first.status).toBe(202);
    expect(replayed(first)).toBeNull();
    const again = await postMessage('replay me', key);
    expect(again.status).toBe(202);
    expect(replayed(again)).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(again.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect(await countMessages('replay me')).toBe(1);

    // Key order in the body does not make it another body.
    const k2 = randomUUID();
    const a = await http.post(
      '/v1/keys',
      { name: 'ordered', scopes: ['read'] },
      { headers: { 'Idempotency-Key': k2 } },
    );
    const b = await http.request('POST', '/v1/keys', {
      rawBody: '{"scopes":["read"],"name":"ordered"}',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': k2 },
    });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(replayed(b)).toBe('true');
    expect(b.body).toEqual(a.body);
  });

  it('answers 422 idempotency_key_reused for the same key with another body or path', async () => {
    const key = randomUUID();
    expect((await postMessage('original', key)).status).toBe(202);
    expectErrorBody(await postMessage('different', key), 422, 'idempotency_key_reused');
    expectErrorBody(
      await http.post('/v1/keys', { name: 'x' }, { headers: { 'Idempotency-Key': key } }),
      422,
      'idempotency_key_reused',
    );
    expect(await countMessages('different')).toBe(0);
  });

  it('scopes keys to the account', async () => {
    const key = randomUUID();
    const mine = await postMessage('per account', key);
    const other = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const theirs = await postMessage('per account', key, other);
    expect(theirs.status).toBe(202);
    expect(replayed(theirs)).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('replays an answer holding a secret only to the key that made the first request; other answers to any key', async () => {
    // Two admin keys of one account (the second made by the first, `admin` asked for).
    const second = await http.post('/v1/keys', { name: 'second admin', scopes: ['read', 'write', 'admin'] });
    const other = http.withKey(second.body.secret);
    const key = randomUUID();
    const first = await http.post('/v1/keys', { name: 'secret once' }, { headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    const stolen = await other.post('/v1/keys', { name: 'secret once' }, { headers: { 'Idempotency-Key': key } });
    expectErrorBody(stolen, 422, 'idempotency_key_reused');
    expect(stolen.body.message).toMatch(/another API key/);
    expect(stolen.text).not.toContain(first.body.secret);
    // The key that asked first still gets its answer again.
    const mine = await http.post('/v1/keys', { name: 'secret once' }, { headers: { 'Idempotency-Key': key } });
    expect(replayed(mine)).toBe('true');
    expect(mine.body.secret).toBe(first.body.secret);

    // Rotation and webhook answers hold secrets too.
    const rotateKey = randomUUID();
    const rotated = await http.post(
      `/v1/keys/${first.body.id}/rotate`,
      {},
      { headers: { 'Idempotency-Key': rotateKey } },
    );
    expect(rotated.status).toBe(201);
    expectErrorBody(
      await other.post(`/v1/keys/${first.body.id}/rotate`, {}, { headers: { 'Idempotency-Key': rotateKey } }),
      422,
      'idempotency_key_reused',
    );
    const hookKey = randomUUID();
    const hook = { url: 'https://93.184.216.34/idem-secret', events: ['webhook.disabled'] };
    expect((await http.post('/v1/webhooks', hook, { headers: { 'Idempotency-Key': hookKey } })).status).toBe(201);
    expectErrorBody(
      await other.post('/v1/webhooks', hook, { headers: { 'Idempotency-Key': hookKey } }),
      422,
      'idempotency_key_reused',
    );

    // An answer without a secret replays to any key of the account, as before.
    const messageKey = randomUUID();
    const message = await postMessage('any key replays', messageKey);
    const again = await postMessage('any key replays', messageKey, other);
    expect(replayed(again)).toBe('true');
    expect(again.body).toEqual(message.body);
  });

  describe('an admin’s answer about an admin-only webhook, asked for again by a key without admin', () => {
    /** An admin-only webhook (made by an admin key) with a test delivery, and a read/write key of the account. */
    async function adminOnlyHook() {
      const rw = http.withKey((await http.post('/v1/keys', { name: 'rw', scopes: ['read', 'write'] })).body.secret);
      // No worker runs in this file: the test delivery is only a row to resend, nothing is sent.
      const hook = await http.post('/v1/webhooks', {
        url: 'https://93.184.216.34/idem-admin',
        events: ['pet.created'],
      });
      const delivery = await http.post(`/v1/webhooks/${hook.body.id}/test`);
      return { rw, path: `/v1/webhooks/${hook.body.id}`, deliveryId: delivery.body.id as number };
    }

    it('refuses a resend replay with the 403 the resend itself gives; the admin key still gets its replay', async () => {
      const { rw, path, deliveryId } = await adminOnlyHook();
      const url = `${path}/deliveries/${deliveryId}/resend`;
      const headers = { 'Idempotency-Key': randomUUID() };
      const first = await http.post(url, undefined, { headers });
      expect(first.status).toBe(202);

      const stolen = await rw.post(url, undefined, { headers });
      expectErrorBody(stolen, 403, 'insufficient_scope');
      expect(stolen.body).toEqual((await rw.post(url)).body);
      const again = await http.post(url, undefined, { headers });
      expect({ status: again.status, replayed: replayed(again), body: again.body }).toEqual({
        status: 202,
        replayed: 'true',
        body: first.body,
      });
    });

    it('refuses a recover replay with the 403 the recover itself gives', async () => {
      const { rw, path } = await adminOnlyHook();
      const body = { since: '2020-01-01T00:00:00Z' };
      const headers = { 'Idempotency-Key': randomUUID() };
      expect((await http.post(`${path}/recover`, body, { headers })).status).toBe(202);

      const stolen = await rw.post(`${path}/recover`, body, { headers });
      expectErrorBody(stolen, 403, 'insufficient_scope');
      expect(stolen.body).toEqual((await rw.post(`${path}/recover`, body)).body);
    });
  });

  it('answers 409 idempotency_key_in_use while the first request is still running', async () => {
    const key = randomUUID();
    const pg = new Client({ connectionString: api.config.databaseUrl });
    await pg.connect();
    try {
      // Hold inserts into messages: the first request is then in flight until we let go.
      await pg.query('BEGIN');
      await pg.query('LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE');
      const first = postMessage('slow one', key);
      // Asked outside the locking transaction: inside it, Postgres would keep answering
      // from the pg_stat_activity snapshot taken at its first read.
      await eventually(async () => {
        const waiting = await db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%messages%'`,
        );
        return waiting[0].n;
      });
      expectErrorBody(await postMessage('slow one', key), 409, 'idempotency_key_in_use');
      expectErrorBody(await postMessage('another body', key), 422, 'idempotency_key_reused');
      await pg.query('COMMIT');
      const done = await first;
      expect(done.status).toBe(202);
      const retry = await postMessage('slow one', key);
      expect(replayed(retry)).toBe('true');
      expect(retry.body.id).toBe(done.body.id);
    } finally {
      await pg.end();
    }
  });

  it('creates exactly one record from 10 parallel retries with one key', async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 10 }, () => postMessage('ten at once', key)));
    const created = answers.filter((r) => r.status === 202 && replayed(r) === null);
    expect(created).toHaveLength(1);
    for (const r of answers) {
      expect([202, 409]).toContain(r.status);
      if (r.status === 202) expect(r.body.id).toBe(created[0].body.id);
      else expect(r.body.code).toBe('idempotency_key_in_use');
    }
    expect(await countMessages('ten at once')).toBe(1);

    const keyKey = randomUUID();
    const keys = await Promise.all(
      Array.from({ length: 10 }, () =>
        http.post('/v1/keys', { name: 'ten keys' }, { headers: { 'Idempotency-Key': keyKey } }),
      ),
    );
    const issued = keys.filter((r) => r.status === 201);
    expect(issued.length).toBeGreaterThan(0);
    expect(new Set(issued.map((r) => r.body.secret)).size).toBe(1);
    const rows = await db.query('SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND name = $2', [
      accountId,
      'ten keys',
    ]);
    expect(rows).toEqual([{ n: 1 }]);
  });

  it('takes stock once from 10 parallel retries of one order', async () => {
    const category = await http.post('/v1/categories', { name: `idem-${randomUUID()}` });
    const pet = await http.post('/v1/pets', { name: 'Rex', categoryId: category.body.id });
    expect((await http.put(`/v1/store/inventory/${pet.body.id}`, { quantity: 5 })).status).toBe(200);
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        http.post('/v1/store/orders', { petId: pet.body.id, quantity: 2 }, { headers: { 'Idempotency-Key': key } }),
      ),
    );
    const placed = answers.filter((r) => r.status === 201);
    expect(placed.length).toBeGreaterThan(0);
    expect(new Set(placed.map((r) => r.body.id)).size).toBe(1);
    for (const r of answers) if (r.status !== 201) expect(r.body.code).toBe('idempotency_key_in_use');
    const replay = await http.post(
      '/v1/store/orders',
      { petId: pet.body.id, quantity: 2 },
      { headers: { 'Idempotency-Key': key } },
    );
    expect(replay.status).toBe(201);
    expect(replayed(replay)).toBe('true');
    expect(replay.body.id).toBe(placed[0].body.id);
    expect((await http.get(`/v1/store/inventory/${pet.body.id}`)).body.quantity).toBe(3);
    const orders = await db.query('SELECT count(*)::int AS n FROM orders WHERE pet_id = $1', [pet.body.id]);
    expect(orders).toEqual([{ n: 1 }]);
  });

  it('keeps no 400: a corrected retry may reuse the key', async () => {
    const key = randomUUID();
    expectErrorBody(
      await http.post('/v1/messages', { message: '' }, { headers: { 'Idempotency-Key': key } }),
      400,
      'validation_failed',
    );
    const fixed = await postMessage('fixed', key);
    expect(fixed.status).toBe(202);
    expect(replayed(fixed)).toBeNull();
  });

  it('keeps no 5xx: after a 503 the same key does the work', async () => {
    const proxy = await TcpProxy.inFrontOf(api.config.databaseUrl);
    const api2 = await startApi({ DATABASE_URL: proxy.url });
    try {
      const client = new HttpClient(api2.url, http.defaultKey);
      expect((await client.get('/v1/account')).status).toBe(200); // caches the key
      await proxy.stop();
      const key = randomUUID();
      expectErrorBody(await postMessage('after an outage', key, client), 503, 'service_unavailable');
      await proxy.restart();
      const res = await eventually(async () => {
        const r = await postMessage('after an outage', key, client);
        return r.status === 202 ? r : null;
      });
      expect(replayed(res)).toBeNull();
      expect(await countMessages('after an outage')).toBe(1);
    } finally {
      await api2.close();
      await proxy.stop();
    }
  });

  it('validates the header: 1..255 printable ASCII characters', async () => {
    for (const key of ['k'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const res = await http.post('/v1/messages', { message: 'bad key' }, { headers: { 'Idempotency-Key': key } });
      expectErrorBody(res, 400, 'invalid_parameter');
      expect(res.body.details).toEqual([{ field: 'header.Idempotency-Key', message: expect.any(String) }]);
    }
    expect((await postMessage('long key', 'k'.repeat(255))).status).toBe(202);
    expect(await countMessages('bad key')).toBe(0);
  });

  it('replays the first answer on every operation the document calls idempotent', async () => {
    const doc = (await new HttpClient(api.url).get('/openapi.json')).body;
    const documented = Object.entries(doc.paths as Record<string, { post?: { parameters?: { name: string }[] } }>)
      .filter(([, item]) => item.post?.parameters?.some((p) => p.name === 'Idempotency-Key'))
      .map(([path]) => path)
      .sort();
    const category = await http.post('/v1/categories', { name: `idem-${randomUUID()}` });
    const pet = await http.post('/v1/pets', { name: 'idem', categoryId: category.body.id });
    const toRotate = await http.post('/v1/keys', { name: 'idem rotate' });
    // No worker runs in this file: the test delivery is only a row to resend, nothing is sent.
    const hook = await http.post('/v1/webhooks', {
      url: 'https://93.184.216.34/idem-hook',
      events: ['webhook.disabled'],
    });
    const delivery = await http.post(`/v1/webhooks/${hook.body.id}/test`);
    // A body for each; an operation documented later without one here fails this test.
    const bodies: Record<string, object | undefined> = {
      '/categories': { name: `idem-${randomUUID()}` },
      '/keys': { name: 'idem' },
      '/keys/{keyId}/rotate': { gracePeriodSeconds: 60 },
      '/messages': { message: 'idem' },
      '/pets': { name: 'idem', categoryId: category.body.id },
      '/store/orders': { petId: pet.body.id },
      // A public address literal (no DNS), subscribed to an event that never fires here.
      '/webhooks': { url: 'https://93.184.216.34/idem', events: ['webhook.disabled'] },
      '/webhooks/{webhookId}/deliveries/{deliveryId}/resend': undefined,
      '/webhooks/{webhookId}/recover': { since: '2020-01-01T00:00:00Z' },
      '/webhooks/{webhookId}/rotate': { gracePeriodSeconds: 60 },
    };
    expect(documented).toEqual(Object.keys(bodies).sort());
    for (const path of documented) {
      const key = randomUUID();
      const url = `/v1${path
        .replace('{keyId}', String(toRotate.body.id))
        .replace('{webhookId}', String(hook.body.id))
        .replace('{deliveryId}', String(delivery.body.id))}`;
      const first = await http.post(url, bodies[path], { headers: { 'Idempotency-Key': key } });
      const again = await http.post(url, bodies[path], { headers: { 'Idempotency-Key': key } });
      expect({ path, status: again.status, replayed: replayed(again) }).toEqual({
        path,
        status: first.status,
        replayed: 'true',
      });
      expect(again.body).toEqual(first.body);
    }
  });

  it('is documented on each idempotent operation: header parameter, 409 and 422', async () => {
    const doc = (await new HttpClient(api.url).get('/openapi.json')).body;
    for (const path of [
      '/messages',
      '/keys',
      '/keys/{keyId}/rotate',
      '/pets',
      '/categories',
      '/store/orders',
      '/webhooks',
    ]) {
      const op = doc.paths[path].post;
      expect(op.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]),
      );
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['409', '422']));
      expect(op.responses['422'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    expect(doc.paths['/messages'].post.responses['202']).toBeDefined();
    expect(doc.paths['/messages'].post.tags).toEqual(['Messages']);
    expect(doc.components.schemas.NewMessage.properties.message).toEqual(
      expect.objectContaining({ minLength: 1, maxLength: 4096 }),
    );
  });
});
