import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../support/test-apps';
import { eventually, HttpClient } from '../support/http';
import { expectErrorBody } from '../support/expect-error';
import { WebhookReceiver } from '@app/testing';

/**
 * Issue 43: a read/write key redirected an admin's api_key.* webhook to itself (PATCH events, PATCH url, resend)
 * and could delete it. A webhook receiving api_key.* events, or made by an admin key, is the admin's alone.
 */
const ENV = { ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WEBHOOK_BACKOFF_MS: '100' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Hook {
  id: number;
  url: string;
  events: string[];
}

describe('webhooks only an admin key manages', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  const receivers: WebhookReceiver[] = [];

  async function receiver(): Promise<WebhookReceiver> {
    const r = await new WebhookReceiver().start();
    receivers.push(r);
    return r;
  }

  /** An account's admin key (the operator's first) and a read/write key of the same account. */
  async function keys(): Promise<{ admin: HttpClient; rw: HttpClient }> {
    const admin = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const made = await admin.post('/v1/keys', { name: 'read/write', scopes: ['read', 'write'] });
    expect(made.status).toBe(201);
    return { admin, rw: admin.withKey(made.body.secret) };
  }

  async function subscribe(http: HttpClient, url: string, events: string[]): Promise<Hook> {
    const res = await http.post('/v1/webhooks', { url, events });
    expect(res.status).toBe(201);
    return res.body;
  }

  /** The delivery of `type` to the webhook once delivered, as an admin key lists it. */
  async function delivered(admin: HttpClient, hookId: number, type: string): Promise<{ id: number }> {
    return eventually(async () => {
      const list = await admin.get(`/v1/webhooks/${hookId}/deliveries`);
      return list.body.find(
        (d: { eventType: string; status: string }) => d.eventType === type && d.status === 'delivered',
      );
    });
  }

  beforeAll(async () => {
    api = await startApi(ENV);
    worker = await startWorker(ENV);
  });
  afterAll(() =>
    closeAll([() => Promise.all(receivers.map((r) => r.close())), () => worker?.close(), () => api?.close()]),
  );

  it('a read/write key cannot take over an admin’s api_key.* webhook: PATCH events, PATCH url and resend are 403, its receiver gets nothing', async () => {
    const adminReceiver = await receiver();
    const attacker = await receiver();
    const admin = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const hook = await subscribe(admin, adminReceiver.url, ['api_key.created', 'api_key.revoked']);
    const made = await admin.post('/v1/keys', { name: 'read/write', scopes: ['read', 'write'] });
    const rw = admin.withKey(made.body.secret);
    const keyCreated = await delivered(admin, hook.id, 'api_key.created');

    expectErrorBody(await rw.patch(`/v1/webhooks/${hook.id}`, { events: ['pet.created'] }), 403, 'insufficient_scope');
    expectErrorBody(await rw.patch(`/v1/webhooks/${hook.id}`, { url: attacker.url }), 403, 'insufficient_scope');
    expectErrorBody(
      await rw.post(`/v1/webhooks/${hook.id}/deliveries/${keyCreated.id}/resend`),
      403,
      'insufficient_scope',
    );

    expect((await admin.get(`/v1/webhooks/${hook.id}`)).body).toEqual(
      expect.objectContaining({ url: adminReceiver.url, events: ['api_key.created', 'api_key.revoked'] }),
    );
    expect((await admin.delete(`/v1/keys/${made.body.id}`)).status).toBe(204);
    await eventually(async () => adminReceiver.requests.some((r) => JSON.parse(r.body).type === 'api_key.revoked'));
    await sleep(300);
    expect(attacker.requests).toEqual([]);
  });

  it.each([
    ['subscribed to api_key.* events', ['api_key.revoked']],
    ['made by an admin key', ['category.created']],
  ])('a key without admin gets 403 on every route of a webhook %s', async (_kind, events) => {
    const { admin, rw } = await keys();
    const r = await receiver();
    const hook = await subscribe(admin, r.url, events);
    const test = await admin.post(`/v1/webhooks/${hook.id}/test`);
    await delivered(admin, hook.id, 'webhook.test');
    const path = `/v1/webhooks/${hook.id}`;
    for (const res of [
      await rw.get(path),
      await rw.patch(path, { description: 'mine now' }),
      await rw.patch(path, { enabled: false }),
      await rw.post(`${path}/rotate`, {}),
      await rw.post(`${path}/test`),
      await rw.post(`${path}/enable`),
      await rw.get(`${path}/deliveries`),
      await rw.get(`${path}/deliveries/${test.body.id}/attempts`),
      await rw.post(`${path}/deliveries/${test.body.id}/resend`),
      await rw.delete(path),
    ]) {
      expectErrorBody(res, 403, 'insufficient_scope');
    }
    expect((await admin.get(path)).body).toEqual(
      expect.objectContaining({ id: hook.id, url: r.url, events, description: null, status: 'active' }),
    );
    expect((await admin.get(`${path}/deliveries`)).body).toHaveLength(1);
    expect(r.requests).toHaveLength(1);
  });

  it('lists an admin-only webhook to admin keys alone; a key without admin sees its own', async () => {
    const { admin, rw } = await keys();
    const r = await receiver();
    const keyEvents = await subscribe(admin, r.url, ['api_key.created']);
    const adminMade = await subscribe(admin, r.url, ['pet.created']);
    const own = await subscribe(rw, r.url, ['pet.created']);
    const ids = async (http: HttpClient) => (await http.get('/v1/webhooks')).body.map((w: Hook) => w.id);
    expect(await ids(admin)).toEqual([keyEvents.id, adminMade.id, own.id]);
    expect(await ids(rw)).toEqual([own.id]);
    // An admin key may manage the others' webhooks too.
    expect((await admin.patch(`/v1/webhooks/${own.id}`, { description: 'seen' })).status).toBe(200);
    expect((await rw.delete(`/v1/webhooks/${own.id}`)).status).toBe(204);
  });

  it('lists and resends a delivery of an api_key.* event only to an admin key, whatever the webhook receives now', async () => {
    const { admin, rw } = await keys();
    const r = await receiver();
    const hook = await subscribe(rw, r.url, ['category.created']);
    expect((await admin.patch(`/v1/webhooks/${hook.id}`, { events: ['api_key.created'] })).status).toBe(200);
    expectErrorBody(await rw.get(`/v1/webhooks/${hook.id}/deliveries`), 403, 'insufficient_scope');
    expect((await admin.post('/v1/keys', { name: 'an event' })).status).toBe(201);
    const keyCreated = await delivered(admin, hook.id, 'api_key.created');
    expect((await admin.patch(`/v1/webhooks/${hook.id}`, { events: ['category.created'] })).status).toBe(200);
    expect((await rw.post('/v1/categories', { name: 'after the key' })).status).toBe(201);
    const categoryCreated = await delivered(admin, hook.id, 'category.created');

    // The webhook is the read/write key's again, but not the api_key.* delivery it once received.
    const seen = await rw.get(`/v1/webhooks/${hook.id}/deliveries`);
    expect(seen.status).toBe(200);
    expect(seen.body.map((d: { id: number }) => d.id)).toEqual([categoryCreated.id]);
    const path = `/v1/webhooks/${hook.id}/deliveries/${keyCreated.id}`;
    expectErrorBody(await rw.get(`${path}/attempts`), 403, 'insufficient_scope');
    expectErrorBody(await rw.post(`${path}/resend`), 403, 'insufficient_scope');
    await sleep(300);
    expect(r.requests.map((q) => JSON.parse(q.body).type)).toEqual(['api_key.created', 'category.created']);
  });

  it('resends only an event type the webhook still receives (409 event_not_subscribed)', async () => {
    const { admin } = await keys();
    const r = await receiver();
    const hook = await subscribe(admin, r.url, ['api_key.created', 'category.created']);
    expect((await admin.post('/v1/categories', { name: 'first' })).status).toBe(201);
    const categoryCreated = await delivered(admin, hook.id, 'category.created');
    expect((await admin.patch(`/v1/webhooks/${hook.id}`, { events: ['api_key.created'] })).status).toBe(200);

    expectErrorBody(
      await admin.post(`/v1/webhooks/${hook.id}/deliveries/${categoryCreated.id}/resend`),
      409,
      'event_not_subscribed',
    );
    await sleep(300);
    expect(r.requests).toHaveLength(1);
    expect((await admin.get(`/v1/webhooks/${hook.id}/deliveries`)).body).toHaveLength(1);
  });

  it('deleting a webhook removes its deliveries’ attempts and their response excerpts at once', async () => {
    const { admin } = await keys();
    const r = await receiver();
    r.answerBody = 'receiver-internal-detail';
    const hook = await subscribe(admin, r.url, ['category.created']);
    const test = await admin.post(`/v1/webhooks/${hook.id}/test`);
    await delivered(admin, hook.id, 'webhook.test');
    const db = api.app.get(DataSource);
    const excerpts = async () =>
      (
        await db.query(`SELECT response_excerpt FROM webhook_delivery_attempts WHERE delivery_id = $1`, [test.body.id])
      ).map((a: { response_excerpt: string }) => a.response_excerpt);
    expect(await excerpts()).toEqual(['receiver-internal-detail']);

    expect((await admin.delete(`/v1/webhooks/${hook.id}`)).status).toBe(204);
    expect(await excerpts()).toEqual([]);
    const left = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`, [hook.id]);
    expect(left[0].n).toBe(0);
  });
});
