import { INestApplicationContext } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { EventFanOutService } from '@app/webhooks';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from './support/test-apps';
import { eventually, HttpClient } from './support/http';
import { isSignedBy, WebhookReceiver } from './support/webhook-receiver';

const ENV = {
  ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
  WEBHOOK_BACKOFF_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
  // Short enough to watch a webhook get disabled, long enough for the retry tests.
  WEBHOOK_MAX_AGE_SECONDS: '3',
  // The lost-job sweep passes often enough to watch it give a delivery its job back.
  SWEEP_INTERVAL_MS: '500',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhooks', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  const receivers: WebhookReceiver[] = [];
  const secrets: string[] = [];

  async function receiver(respond?: (n: number) => number): Promise<WebhookReceiver> {
    const r = await new WebhookReceiver(respond).start();
    receivers.push(r);
    return r;
  }

  let lastAccountId = 0;
  async function account(): Promise<HttpClient> {
    const created = await createAccount(api);
    lastAccountId = created.accountId;
    return new HttpClient(api.url, created.apiKey);
  }

  async function subscribe(http: HttpClient, url: string, events: string[]) {
    const res = await http.post('/v1/webhooks', { url, events });
    expect(res.status).toBe(201);
    secrets.push(res.body.secret);
    return res.body as { id: number; secret: string; url: string; events: string[]; status: string };
  }

  /** Creates then revokes a key: one api_key.created and one api_key.revoked event. */
  async function createAndRevokeKey(http: HttpClient): Promise<number> {
    const key = await http.post('/v1/keys', { name: 'temp' });
    expect(key.status).toBe(201);
    expect((await http.delete(`/v1/keys/${key.body.id}`)).status).toBe(204);
    return key.body.id;
  }

  beforeAll(async () => {
    api = await startApi(ENV);
    worker = await startWorker(ENV);
  });
  afterAll(() =>
    closeAll([() => Promise.all(receivers.map((r) => r.close())), () => worker?.close(), () => api?.close()]),
  );

  it('delivers a subscribed event, signed with the secret, and not the unsubscribed ones', async () => {
    const http = await account();
    const revokedOnly = await receiver();
    const createdOnly = await receiver();
    const hook = await subscribe(http, revokedOnly.url, ['api_key.revoked']);
    await subscribe(http, createdOnly.url, ['api_key.created']);
    expect(hook).toEqual(
      expect.objectContaining({ url: revokedOnly.url, events: ['api_key.revoked'], status: 'active' }),
    );
    expect(hook.secret).toMatch(/^whsec_/);

    const keyId = await createAndRevokeKey(http);
    const req = await eventually(async () => revokedOnly.requests[0]);
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    const event = JSON.parse(req.body);
    expect(event).toEqual(
      expect.objectContaining({ type: 'api_key.revoked', resourceType: 'api_key', resourceId: String(keyId) }),
    );
    expect(req.headers['petstore-event-id']).toBe(String(event.id));
    expect(req.headers['petstore-event-type']).toBe('api_key.revoked');

    // Standard Webhooks: the reference verifier accepts it with the secret, and only with it.
    expect(req.headers['webhook-id']).toBe(String(event.id));
    expect(Math.abs(Date.now() / 1000 - Number(req.headers['webhook-timestamp']))).toBeLessThan(60);
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(hook.secret).verify(req.body, req.headers as Record<string, string>)).toEqual(event);
    expect(() =>
      new Webhook(`whsec_${'A'.repeat(44)}`).verify(req.body, req.headers as Record<string, string>),
    ).toThrow(WebhookVerificationError);
    expect(isSignedBy(hook.secret, req.body, req.headers)).toBe(true);

    // The legacy header until the sunset: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>.
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers['petstore-signature'] as string)!;
    expect(t).toBe(req.headers['webhook-timestamp']);
    expect(v1).toBe(createHmac('sha256', hook.secret).update(`${t}.${req.body}`).digest('hex'));

    // The other webhook got the created event, so its fan-out is done: it was not sent here.
    await eventually(async () => createdOnly.requests.some((r) => JSON.parse(r.body).type === 'api_key.created'));
    expect(createdOnly.requests.every((r) => JSON.parse(r.body).type === 'api_key.created')).toBe(true);
    expect(revokedOnly.requests).toHaveLength(1);

    const deliveries = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body).toEqual([
      expect.objectContaining({
        webhookId: hook.id,
        eventId: event.id,
        eventType: 'api_key.revoked',
        status: 'delivered',
        attempts: 1,
        lastStatusCode: 200,
        nextAttemptAt: null,
        deliveredAt: expect.any(String),
      }),
    ]);

    // The secret was shown once: never in a list.
    const list = await http.get('/v1/webhooks');
    expect(list.body.map((w: { id: number }) => w.id)).toContain(hook.id);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');

    // A second fan-out of the same event (relay re-enqueue, job retry) adds no delivery.
    await expect(worker.get(EventFanOutService).fanOut({ accountId: lastAccountId, eventId: event.id })).resolves.toBe(
      0,
    );
    expect((await http.get(`/v1/webhooks/${hook.id}/deliveries`)).body).toHaveLength(1);
  });

  it('retries a failing receiver with backoff until it answers 2xx (third attempt)', async () => {
    const http = await account();
    const flaky = await receiver((n) => (n <= 2 ? 500 : 200));
    const hook = await subscribe(http, flaky.url, ['api_key.revoked']);
    await createAndRevokeKey(http);

    const delivery = await eventually(async () => {
      const res = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return res.body[0]?.status === 'delivered' && res.body[0];
    });
    expect(delivery).toEqual(expect.objectContaining({ attempts: 3, lastStatusCode: 200, lastError: null }));
    expect(flaky.requests).toHaveLength(3);
    const ids = flaky.requests.map((r) => [r.headers['petstore-event-id'], r.headers['webhook-id']]);
    expect(new Set(ids.flat()).size).toBe(1);
    for (const r of flaky.requests) {
      expect(isSignedBy(hook.secret, r.body, r.headers)).toBe(true);
    }
  });

  it('shows a pending retry with its next attempt time', async () => {
    const http = await account();
    const failing = await receiver(() => 503);
    const hook = await subscribe(http, failing.url, ['api_key.revoked']);
    await createAndRevokeKey(http);
    const pending = await eventually(async () => {
      const res = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return res.body[0]?.attempts >= 1 && res.body[0]?.status === 'pending' && res.body[0];
    });
    expect(pending).toEqual(expect.objectContaining({ lastStatusCode: 503, lastError: 'HTTP 503' }));
    expect(Date.parse(pending.nextAttemptAt)).toBeGreaterThan(Date.parse(pending.lastAttemptAt));
    expect((await http.delete(`/v1/webhooks/${hook.id}`)).status).toBe(204);
  });

  it('stops delivering once the webhook is deleted', async () => {
    const http = await account();
    const failing = await receiver(() => 500);
    const hook = await subscribe(http, failing.url, ['api_key.revoked']);
    await createAndRevokeKey(http);
    await eventually(async () => failing.requests.length >= 2);

    expect((await http.delete(`/v1/webhooks/${hook.id}`)).status).toBe(204);
    await sleep(300); // an attempt already in flight may still land
    const seen = failing.requests.length;
    await sleep(1_200); // several backoff periods at WEBHOOK_BACKOFF_MS=100
    expect(failing.requests).toHaveLength(seen);

    expect((await http.get(`/v1/webhooks/${hook.id}/deliveries`)).status).toBe(404);
    expect((await http.delete(`/v1/webhooks/${hook.id}`)).status).toBe(404);
    const list = await http.get('/v1/webhooks');
    expect(list.body.map((w: { id: number }) => w.id)).not.toContain(hook.id);
  });

  it('disables a webhook that keeps failing past the maximum age, and says so with an event', async () => {
    const http = await account();
    const dead = await receiver(() => 500);
    const hook = await subscribe(http, dead.url, ['api_key.revoked']);
    await createAndRevokeKey(http);

    const disabled = await eventually(async () => {
      const res = await http.get('/v1/webhooks');
      return res.body.find((w: { id: number; status: string }) => w.id === hook.id && w.status === 'disabled');
    });
    expect(disabled.disabledAt).toEqual(expect.any(String));

    const events = await http.get('/v1/events?type=webhook.disabled');
    expect(events.body).toEqual([
      expect.objectContaining({
        type: 'webhook.disabled',
        resourceType: 'webhook',
        resourceId: String(hook.id),
        data: expect.objectContaining({ id: hook.id, status: 'disabled', url: dead.url }),
      }),
    ]);
    expect(JSON.stringify(events.body)).not.toContain(hook.secret);
    const [delivery] = (await http.get(`/v1/webhooks/${hook.id}/deliveries`)).body;
    expect(delivery).toEqual(expect.objectContaining({ status: 'failed', lastStatusCode: 500, nextAttemptAt: null }));
    expect(delivery.attempts).toBeGreaterThan(2);
    expect(dead.requests).toHaveLength(delivery.attempts);
  });

  it('re-enables a disabled webhook: later events are delivered, the failed one is not resent', async () => {
    const http = await account();
    let answer = 500;
    const flaky = await receiver(() => answer);
    const hook = await subscribe(http, flaky.url, ['api_key.revoked']);
    await createAndRevokeKey(http);
    await eventually(async () => {
      const res = await http.get('/v1/webhooks');
      return res.body.some((w: { id: number; status: string }) => w.id === hook.id && w.status === 'disabled');
    });
    const failedAttempts = flaky.requests.length;

    answer = 204; // the receiver is back
    const enabled = await http.post(`/v1/webhooks/${hook.id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toEqual(expect.objectContaining({ id: hook.id, status: 'active', disabledAt: null }));
    expect(enabled.body).not.toHaveProperty('secret');
    expect((await http.post(`/v1/webhooks/${hook.id}/enable`)).body.status).toBe('active'); // again: a no-op

    const keyId = await createAndRevokeKey(http);
    const delivered = await eventually(async () => {
      const rows = (await http.get(`/v1/webhooks/${hook.id}/deliveries`)).body;
      return rows.length === 2 && rows[1].status === 'delivered' ? rows : null;
    });
    expect(delivered[0]).toEqual(expect.objectContaining({ status: 'failed', lastStatusCode: 500 }));
    expect(flaky.requests).toHaveLength(failedAttempts + 1);
    expect(JSON.parse(flaky.requests[failedAttempts].body)).toEqual(
      expect.objectContaining({ type: 'api_key.revoked', resourceId: String(keyId) }),
    );
  });

  it('gives a pending delivery whose job was lost its job again (the lost-job sweep), once', async () => {
    const http = await account();
    const r = await receiver();
    const hook = await subscribe(http, r.url, ['api_key.revoked']);
    await createAndRevokeKey(http);
    await eventually(async () => r.requests.length === 1);
    // A delivery row as the fan-out commits it, a minute ago, whose job never reached Redis
    // (or was flushed from it): nothing but the sweep will ever send it.
    const db = api.app.get(DataSource);
    const [created] = await db.query(
      `SELECT id FROM events WHERE account_id = $1 AND type = 'api_key.created' ORDER BY id DESC LIMIT 1`,
      [lastAccountId],
    );
    const [row] = await db.query(
      `INSERT INTO webhook_deliveries (webhook_id, account_id, event_id, event_type, created_at)
       VALUES ($1, $2, $3, 'api_key.created', now() - interval '1 minute') RETURNING id`,
      [hook.id, lastAccountId, created.id],
    );
    const isSwept = (q: { body: string }) => JSON.parse(q.body).type === 'api_key.created';

    const req = await eventually(async () => r.requests.find(isSwept), 10_000);
    expect(req.headers['petstore-event-id']).toBe(String(created.id));
    expect(isSignedBy(hook.secret, req.body, req.headers)).toBe(true);
    const delivery = await eventually(async () => {
      const list = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return list.body.find((d: { id: number; status: string }) => d.id === row.id && d.status === 'delivered');
    });
    expect(delivery).toEqual(expect.objectContaining({ eventId: created.id, attempts: 1, lastStatusCode: 200 }));
    await sleep(1_500); // three more sweep passes: a delivered row is not sent again
    expect(r.requests.filter(isSwept)).toHaveLength(1);
  });

  it('fans out an event whose fan-out job was lost (the lost-job sweep)', async () => {
    const http = await account();
    const r = await receiver();
    const hook = await subscribe(http, r.url, ['api_key.revoked']);
    const db = api.app.get(DataSource);
    const fannedOut = async (id: number) =>
      (await db.query('SELECT fanned_out FROM events WHERE id = $1', [id]))[0].fanned_out as boolean;

    // The usual path marks the event done, so the sweep leaves it alone.
    await createAndRevokeKey(http);
    const first = JSON.parse((await eventually(async () => r.requests[0])).body);
    expect(await eventually(async () => fannedOut(first.id))).toBe(true);

    // An event committed by the API whose job never reached Redis (or was flushed from it).
    const [lost] = await db.query(
      `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out)
       VALUES ($1, 'api_key.revoked', 'api_key', 'lost-job', 1, '{"id": "lost-job"}', false) RETURNING id`,
      [lastAccountId],
    );
    expect(await fannedOut(lost.id)).toBe(false);
    const req = await eventually(
      async () => r.requests.find((q) => q.headers['petstore-event-id'] === String(lost.id)),
      10_000,
    );
    expect(JSON.parse(req.body)).toEqual(expect.objectContaining({ id: lost.id, resourceId: 'lost-job' }));
    expect(isSignedBy(hook.secret, req.body, req.headers)).toBe(true);
    expect(await fannedOut(lost.id)).toBe(true);
    await sleep(1_500); // three more sweep passes: sent once
    expect(r.requests.filter((q) => q.headers['petstore-event-id'] === String(lost.id))).toHaveLength(1);
  });

  it('sends a signed test delivery on request', async () => {
    const http = await account();
    const r = await receiver();
    const hook = await subscribe(http, r.url, ['pet.created']);
    const res = await http.post(`/v1/webhooks/${hook.id}/test`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual(
      expect.objectContaining({ webhookId: hook.id, eventId: null, eventType: 'webhook.test', status: 'pending' }),
    );

    const req = await eventually(async () => r.requests[0]);
    expect(req.headers['petstore-event-type']).toBe('webhook.test');
    expect(req.headers['petstore-event-id']).toBe(`test-${res.body.id}`);
    expect(JSON.parse(req.body)).toEqual(
      expect.objectContaining({ id: null, type: 'webhook.test', resourceId: String(hook.id) }),
    );
    expect(isSignedBy(hook.secret, req.body, req.headers)).toBe(true);
    await eventually(async () => {
      const list = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return list.body.some((d: { id: number; status: string }) => d.id === res.body.id && d.status === 'delivered');
    });
  });

  it('keeps each account’s webhooks to itself (404 on another account’s)', async () => {
    const owner = await account();
    const other = await account();
    const r = await receiver();
    const hook = await subscribe(owner, r.url, ['api_key.revoked']);

    expect((await other.get('/v1/webhooks')).body).toEqual([]);
    for (const res of [
      await other.get(`/v1/webhooks/${hook.id}/deliveries`),
      await other.post(`/v1/webhooks/${hook.id}/test`),
      await other.post(`/v1/webhooks/${hook.id}/enable`),
      await other.delete(`/v1/webhooks/${hook.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    // The other account's events never reach this webhook.
    await createAndRevokeKey(other);
    await sleep(500);
    expect(r.requests).toHaveLength(0);
    expect((await owner.get('/v1/webhooks')).body.map((w: { id: number }) => w.id)).toEqual([hook.id]);
  });

  it('subscribing to api_key.* events needs the admin scope; a non-admin key’s webhook gets none of them', async () => {
    const owner = await account();
    const plain = await owner.post('/v1/keys', { name: 'no admin', scopes: ['read', 'write'] });
    const noAdmin = owner.withKey(plain.body.secret);
    const r = await receiver();
    for (const events of [['api_key.created'], ['category.created', 'api_key.banned']]) {
      const refused = await noAdmin.post('/v1/webhooks', { url: r.url, events });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual(expect.objectContaining({ code: 'insufficient_scope' }));
      expect(refused.body.details).toEqual([expect.objectContaining({ field: 'events' })]);
    }
    expect((await owner.get('/v1/webhooks')).body).toEqual([]);

    await subscribe(noAdmin, r.url, ['category.created']);
    await createAndRevokeKey(owner);
    expect((await owner.post('/v1/categories', { name: 'after the keys' })).status).toBe(201);
    await eventually(async () => r.requests.length > 0);
    expect(r.requests.map((req) => JSON.parse(req.body).type)).toEqual(['category.created']);
  });

  it('validates the subscription', async () => {
    const http = await account();
    for (const body of [
      { url: 'http://127.0.0.1:1/x', events: [] },
      { url: 'http://127.0.0.1:1/x', events: ['pet.exploded'] },
      { url: 'http://127.0.0.1:1/x', events: ['pet.created', 'pet.created'] },
      { url: 'http://127.0.0.1:1/x' },
      { events: ['pet.created'] },
    ]) {
      const res = await http.post('/v1/webhooks', body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('is marked experimental in the OpenAPI document', async () => {
    const doc = (await new HttpClient(api.url).get('/openapi.json')).body;
    const ops = [
      doc.paths['/webhooks'].post,
      doc.paths['/webhooks'].get,
      doc.paths['/webhooks/{webhookId}'].delete,
      doc.paths['/webhooks/{webhookId}/deliveries'].get,
      doc.paths['/webhooks/{webhookId}/test'].post,
      doc.paths['/webhooks/{webhookId}/enable'].post,
    ];
    for (const op of ops) {
      expect(op['x-stability']).toBe('experimental');
      expect(op.tags).toEqual(['Webhooks']);
    }
  });

  describe('SSRF protection (ALLOW_PRIVATE_WEBHOOK_URLS=false)', () => {
    let strict: RunningApi;
    beforeAll(async () => {
      strict = await startApi({ ...ENV, ALLOW_PRIVATE_WEBHOOK_URLS: 'false' });
    });
    afterAll(() => strict.close());

    it.each([
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://10.0.0.8/hook',
      'http://192.168.1.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0.0.0.0/hook',
      'ftp://example.com/hook',
      'file:///etc/passwd',
    ])('refuses %s with 400 validation_failed naming url', async (url) => {
      const http = new HttpClient(strict.url, (await createAccount(strict)).apiKey);
      const res = await http.post('/v1/webhooks', { url, events: ['pet.created'] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(
        expect.objectContaining({ code: 'validation_failed', details: [expect.objectContaining({ field: 'url' })] }),
      );
      expect((await http.get('/v1/webhooks')).body).toEqual([]);
    });
  });

  it('never writes a webhook secret to the logs', async () => {
    const logFile = api.config.logFile;
    expect(logFile).toBeDefined();
    await sleep(200); // let the asynchronous log writer flush
    const log = readFileSync(logFile as string, 'utf8');
    expect(secrets.length).toBeGreaterThan(5);
    for (const s of secrets) expect(log).not.toContain(s);
  });
});
