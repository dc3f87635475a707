import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../support/test-apps';
import { webhooksSettled } from '../support/quiescence';
import { eventually, HttpClient } from '../support/http';
import { expectErrorBody } from '../support/expect-error';
import { WebhookReceiver } from '@app/testing';
import type { PublicEvent } from '@app/events';
import { SseClient } from '../support/sse-client';

/**
 * Issue 43: a read/write key redirected an admin's api_key.* webhook to itself (PATCH events, PATCH url, resend)
 * and could delete it. A webhook receiving api_key.* events, or made by an admin key, is the admin's alone.
 */
// A webhook whose receiver keeps failing is disabled within seconds (webhook.disabled).
const ENV = { ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WEBHOOK_BACKOFF_MS: '100', WEBHOOK_MAX_AGE_SECONDS: '2' };

// Only where a live stream must stay quiet: no later event marks the end of what it would send.
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
  const streams: SseClient[] = [];

  async function receiver(status = 200): Promise<WebhookReceiver> {
    const r = await new WebhookReceiver(() => status).start();
    receivers.push(r);
    return r;
  }

  /** An account's admin key (the operator's first) and a read/write key of the same account. */
  async function keys(): Promise<{ admin: HttpClient; rw: HttpClient; accountId: number }> {
    const { accountId, apiKey } = await createAccount(api);
    const admin = new HttpClient(api.url, apiKey);
    const made = await admin.post('/v1/keys', { name: 'read/write', scopes: ['read', 'write'] });
    expect(made.status).toBe(201);
    return { admin, rw: admin.withKey(made.body.secret), accountId };
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
    closeAll([
      () => Promise.all(streams.map((c) => c.close())),
      () => Promise.all(receivers.map((r) => r.close())),
      () => worker?.close(),
      () => api?.close(),
    ]),
  );

  it('a read/write key cannot take over an admin’s api_key.* webhook: PATCH events, PATCH url and resend are 403, its receiver gets nothing', async () => {
    const adminReceiver = await receiver();
    const attacker = await receiver();
    const { accountId, apiKey } = await createAccount(api);
    const admin = new HttpClient(api.url, apiKey);
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
    await webhooksSettled(api.app.get(DataSource), accountId);
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
      // Issue 60: one wording whatever makes it admin-only; it names no event type.
      expect(res.body.message).toBe(
        'This webhook is visible to admin keys only, and this API key lacks the admin scope',
      );
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
    const { admin, rw, accountId } = await keys();
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
    for (const res of [await rw.get(`${path}/attempts`), await rw.post(`${path}/resend`)]) {
      expectErrorBody(res, 403, 'insufficient_scope');
      expect(res.body.message).not.toMatch(/api_key/);
    }
    await webhooksSettled(api.app.get(DataSource), accountId);
    expect(r.requests.map((q) => JSON.parse(q.body).type)).toEqual(['api_key.created', 'category.created']);
  });

  it('resends only an event type the webhook still receives (409 event_not_subscribed)', async () => {
    const { admin, accountId } = await keys();
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
    await webhooksSettled(api.app.get(DataSource), accountId);
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

  describe('webhook.disabled of an admin-only webhook', () => {
    /** An admin-only webhook and one of the read/write key, both disabled (a category.created they could not take). */
    async function disableBoth(admin: HttpClient, rw: HttpClient): Promise<{ adminOnly: Hook; own: Hook }> {
      const adminOnly = await subscribe(admin, (await receiver(500)).url, ['category.created']);
      const own = await subscribe(rw, (await receiver(500)).url, ['category.created']);
      expect((await rw.post('/v1/categories', { name: `dead ends ${adminOnly.id}` })).status).toBe(201);
      await eventually(async () => {
        const list = (await admin.get('/v1/webhooks')).body as { id: number; status: string }[];
        return list.filter((w) => [adminOnly.id, own.id].includes(w.id) && w.status === 'disabled').length === 2;
      });
      return { adminOnly, own };
    }

    const disabledOf = (events: PublicEvent[]) =>
      events
        .filter((e) => e.type === 'webhook.disabled')
        .map((e) => Number(e.resourceId))
        .sort((a, b) => a - b);

    it('is in the events feed of admin keys alone, with the whole webhook; the others’ own webhook.disabled as before', async () => {
      const { admin, rw } = await keys();
      const { adminOnly, own } = await disableBoth(admin, rw);

      expect(disabledOf((await rw.get('/v1/events')).body)).toEqual([own.id]);
      expect(disabledOf((await rw.get('/v1/events?type=webhook.disabled')).body)).toEqual([own.id]);
      const seen = (await admin.get<PublicEvent[]>('/v1/events?type=webhook.disabled')).body;
      expect(disabledOf(seen)).toEqual([adminOnly.id, own.id]);
      const event = seen.find((e) => Number(e.resourceId) === adminOnly.id)!;
      expect(event.data).toEqual((await admin.get(`/v1/webhooks/${adminOnly.id}`)).body);
    });

    it('reaches the live stream and the backlog of admin keys alone', async () => {
      const { admin, rw } = await keys();
      const open = async (key: string, headers: Record<string, string> = {}) => {
        const client = await SseClient.open(api.url, key, '?type=webhook.disabled', headers);
        streams.push(client);
        expect(client.status).toBe(200);
        return client;
      };
      const adminLive = await open(admin.defaultKey!);
      const rwLive = await open(rw.defaultKey!);
      const { adminOnly, own } = await disableBoth(admin, rw);

      await adminLive.waitForEvents(2);
      await rwLive.waitForEvents(1);
      await sleep(300);
      expect(disabledOf(adminLive.events)).toEqual([adminOnly.id, own.id]);
      expect(disabledOf(rwLive.events)).toEqual([own.id]);
      const [first] = (await rw.get<PublicEvent[]>('/v1/events')).body;
      const rwBacklog = await open(rw.defaultKey!, { 'Last-Event-ID': String(first.id) });
      await rwBacklog.waitForEvents(1);
      await sleep(300);
      expect(disabledOf(rwBacklog.events)).toEqual([own.id]);
    });

    it('is delivered to admin-only webhooks alone', async () => {
      const { admin, rw, accountId } = await keys();
      const adminWatch = await receiver();
      const rwWatch = await receiver();
      await subscribe(admin, adminWatch.url, ['webhook.disabled']);
      await subscribe(rw, rwWatch.url, ['webhook.disabled']);
      const { adminOnly, own } = await disableBoth(admin, rw);

      const types = (r: WebhookReceiver) => disabledOf(r.requests.map((q) => JSON.parse(q.body) as PublicEvent));
      await eventually(async () => types(adminWatch).length === 2 && types(rwWatch).length >= 1);
      await webhooksSettled(api.app.get(DataSource), accountId);
      expect(types(adminWatch)).toEqual([adminOnly.id, own.id]);
      expect(types(rwWatch)).toEqual([own.id]);
    });

    it('is not sent again to a webhook no longer admin-only, which a key without admin may point elsewhere', async () => {
      const { admin, rw } = await keys();
      const attacker = await receiver();
      const hook = await subscribe(rw, (await receiver()).url, ['webhook.disabled']);
      const path = `/v1/webhooks/${hook.id}`;
      expect((await admin.patch(path, { events: ['webhook.disabled', 'api_key.banned'] })).status).toBe(200);
      const { adminOnly } = await disableBoth(admin, rw);
      const event = (await admin.get<PublicEvent[]>('/v1/events?type=webhook.disabled')).body.find(
        (e) => Number(e.resourceId) === adminOnly.id,
      )!;
      const received = await eventually(async () =>
        ((await admin.get(`${path}/deliveries`)).body as { id: number; eventId: number; status: string }[]).find(
          (d) => d.eventId === event.id && d.status === 'delivered',
        ),
      );
      expect((await admin.patch(path, { events: ['webhook.disabled'] })).status).toBe(200);

      expect((await rw.patch(path, { url: attacker.url })).status).toBe(200);
      const resent = await rw.post(`${path}/deliveries/${received.id}/resend`);
      expect(resent.status).toBe(202);
      const settled = await eventually(async () =>
        ((await admin.get(`${path}/deliveries`)).body as { id: number; status: string }[]).find(
          (d) => d.id === resent.body.id && d.status !== 'pending',
        ),
      );
      expect(attacker.requests).toEqual([]);
      expect(settled).toEqual(
        expect.objectContaining({ status: 'failed', attempts: 0, lastError: 'event only for admin-only webhooks' }),
      );
    });
  });
});
