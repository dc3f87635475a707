import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PLAN_RECOVER_PER_CALL } from '@app/access';
import { CategoriesService } from '@app/catalog';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { eventually, HttpClient } from '../../support/http';
import { expectErrorBody } from '../../support/expect-error';
import { webhooksSettled } from '../../support/quiescence';
import { WebhookReceiver } from '@app/testing';
import { maxAttempts } from '@app/webhooks';

/** Issue 46.4: after an outage, one call resends every event whose deliveries failed since a time. */
const ENV = {
  ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
  WEBHOOK_BACKOFF_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
  // An outage that disables the webhook within the test.
  WEBHOOK_MAX_AGE_SECONDS: '2',
};

interface Delivery {
  id: number;
  eventId: number;
  eventType: string;
  status: string;
  resendOf: number | null;
}

interface Outage {
  accountId: number;
  http: HttpClient;
  receiver: WebhookReceiver;
  hookId: number;
  /** Before the first event. */
  since: string;
  delivered: Delivery[];
  failed: Delivery[];
  /** The receiver's requests up to the end of the outage. */
  seen: number;
  /** With `cutBefore`: after the deliveries of the lost events before it were made, before the next one's. */
  cut?: string;
}

describe('recovering a webhook’s failed deliveries', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  const receivers: WebhookReceiver[] = [];

  /** Nothing more is on its way to the outage's receiver. */
  const settledAfter = (o: Outage) => webhooksSettled(api.app.get(DataSource), o.accountId);
  const webhookIds = (r: WebhookReceiver, from: number) => r.requests.slice(from).map((q) => q.headers['webhook-id']);

  async function deliveries(http: HttpClient, hookId: number): Promise<Delivery[]> {
    return (await http.get(`/v1/webhooks/${hookId}/deliveries?limit=100`)).body;
  }

  /**
   * A webhook on `events` whose receiver takes one category.created, then answers 500 until the webhook is disabled
   * with `lost` events failed (category names; `deleted` ones also deleted), then is back.
   */
  async function outage(
    opts: { events?: string[]; lost?: string[]; deleted?: boolean; cutBefore?: string } = {},
  ): Promise<Outage> {
    const { events = ['category.created'], lost = ['lost 1', 'lost 2'], deleted = false, cutBefore } = opts;
    let cut: string | undefined;
    const { accountId, apiKey } = await createAccount(api);
    const http = new HttpClient(api.url, apiKey);
    let answer = 200;
    const receiver = await new WebhookReceiver(() => answer).start();
    receivers.push(receiver);
    const hook = await http.post('/v1/webhooks', { url: receiver.url, events });
    expect(hook.status).toBe(201);
    const since = new Date(Date.now() - 1_000).toISOString();
    expect((await http.post('/v1/categories', { name: 'delivered' })).status).toBe(201);
    await eventually(async () => (await deliveries(http, hook.body.id))[0]?.status === 'delivered');

    answer = 500;
    for (const [i, name] of lost.entries()) {
      if (name === cutBefore) {
        // The first delivery and one per lost event so far exist: every later delivery is made after the cut.
        await eventually(async () => (await deliveries(http, hook.body.id)).length === 1 + i);
        const at = new Date().toISOString();
        cut = at;
        // Deliveries take the database's clock: past the cut, strictly.
        await eventually(
          async () => (await api.app.get(DataSource).query('SELECT now() > $1::timestamptz AS past', [at]))[0].past,
        );
      }
      const category = await http.post('/v1/categories', { name });
      expect(category.status).toBe(201);
      if (deleted) expect((await http.delete(`/v1/categories/${category.body.id}`)).status).toBe(204);
    }
    const settled = await eventually(async () => {
      const all = await deliveries(http, hook.body.id);
      const webhook = (await http.get(`/v1/webhooks/${hook.body.id}`)).body;
      return webhook.status === 'disabled' && all.every((d) => d.status !== 'pending') ? all : undefined;
    }, 15_000);
    answer = 200;
    return {
      accountId,
      http,
      receiver,
      hookId: hook.body.id,
      since,
      delivered: settled.filter((d) => d.status === 'delivered'),
      failed: settled.filter((d) => d.status === 'failed'),
      seen: receiver.requests.length,
      cut,
    };
  }

  beforeAll(async () => {
    api = await startApi(ENV);
    worker = await startWorker(ENV);
  });
  afterAll(() =>
    closeAll([() => Promise.all(receivers.map((r) => r.close())), () => worker?.close(), () => api?.close()]),
  );

  it('resends each event whose deliveries failed since the time exactly once, not the delivered ones', async () => {
    const o = await outage();
    expect(o.failed).toHaveLength(2);
    const recovered = await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: o.since });
    expect(recovered.status).toBe(202);
    expect(recovered.body).toEqual({ queued: 2, skipped: 0, more: false });

    const resent = await eventually(async () => {
      const all = await deliveries(o.http, o.hookId);
      const news = all.filter((d) => d.resendOf !== null);
      return news.length === 2 && news.every((d) => d.status === 'delivered') ? news : undefined;
    });
    expect(resent.map((d) => d.resendOf).sort()).toEqual(o.failed.map((d) => d.id).sort());
    // Once each: a second call finds them delivered.
    const again = await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: o.since });
    expect(again.body).toEqual({ queued: 0, skipped: 0, more: false });
    await settledAfter(o);
    expect(webhookIds(o.receiver, o.seen).sort()).toEqual(o.failed.map((d) => String(d.eventId)).sort());
  });

  it('re-enables the disabled webhook', async () => {
    const o = await outage({ lost: ['lost'] });
    expect((await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: o.since })).status).toBe(202);
    const webhook = (await o.http.get(`/v1/webhooks/${o.hookId}`)).body;
    expect(webhook).toEqual(expect.objectContaining({ status: 'active', disabledAt: null }));
    // Events from now on are delivered again.
    expect((await o.http.post('/v1/categories', { name: 'after' })).status).toBe(201);
    await eventually(async () =>
      o.receiver.requests.slice(o.seen).some((q) => JSON.parse(q.body).data.name === 'after'),
    );
  });

  it('queues nothing more on a replay with the same Idempotency-Key', async () => {
    const o = await outage();
    const key = { headers: { 'Idempotency-Key': `recover-${o.hookId}` } };
    const first = await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: o.since }, key);
    expect(first.body).toEqual({ queued: 2, skipped: 0, more: false });
    const replay = await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: o.since }, key);
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    await eventually(async () => o.receiver.requests.length >= o.seen + 2);
    await settledAfter(o);
    expect(o.receiver.requests).toHaveLength(o.seen + 2);
    expect((await deliveries(o.http, o.hookId)).filter((d) => d.resendOf !== null)).toHaveLength(2);
  });

  it('skips the event types the webhook no longer receives, and says how many', async () => {
    const o = await outage({ events: ['category.created', 'category.deleted'], lost: ['gone'], deleted: true });
    expect(o.failed.map((d) => d.eventType).sort()).toEqual(['category.created', 'category.deleted']);
    expect((await o.http.patch(`/v1/webhooks/${o.hookId}`, { events: ['category.created'] })).status).toBe(200);

    const recovered = await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: o.since });
    expect(recovered.body).toEqual({ queued: 1, skipped: 1, more: false });
    await eventually(async () => o.receiver.requests.length > o.seen);
    await settledAfter(o);
    expect(o.receiver.requests.slice(o.seen).map((q) => JSON.parse(q.body).type)).toEqual(['category.created']);
  });

  it('does not resend deliveries made before the time', async () => {
    const o = await outage({ lost: ['lost'] });
    const recovered = await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: new Date().toISOString() });
    expect(recovered.body).toEqual({ queued: 0, skipped: 0, more: false });
    await settledAfter(o);
    expect(o.receiver.requests).toHaveLength(o.seen);
  });

  it('with `until`, resends only the events whose first delivery was made before it: an incident window alone', async () => {
    const o = await outage({ lost: ['early 1', 'early 2', 'late'], cutBefore: 'late' });
    const names = (from: number) => o.receiver.requests.slice(from).map((q) => JSON.parse(q.body).data.name as string);
    const window = await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: o.since, until: o.cut });
    expect(window.status).toBe(202);
    expect(window.body).toEqual({ queued: 2, skipped: 0, more: false });
    await eventually(async () => o.receiver.requests.length >= o.seen + 2);
    await settledAfter(o);
    expect(names(o.seen).sort()).toEqual(['early 1', 'early 2']);

    // The rest, after the window.
    const seen = o.receiver.requests.length;
    const rest = await o.http.post(`/v1/webhooks/${o.hookId}/recover`, { since: o.cut });
    expect(rest.body).toEqual({ queued: 1, skipped: 0, more: false });
    await eventually(async () => o.receiver.requests.length > seen);
    expect(names(seen)).toEqual(['late']);
  });

  it('answers 400 naming `until` for a malformed time, 422 invalid_range for one not after `since`', async () => {
    const http = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const hook = await http.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['category.created'] });
    const since = '2026-05-01T08:00:00Z';
    for (const until of ['tomorrow', 42]) {
      const res = await http.post(`/v1/webhooks/${hook.body.id}/recover`, { since, until });
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'until' })]);
    }
    // Each valid alone, as the schema says: the window they make is the domain's rule (as GET /usage's from and to).
    for (const until of [since, '2026-05-01T07:59:59.999Z']) {
      const res = await http.post(`/v1/webhooks/${hook.body.id}/recover`, { since, until });
      expectErrorBody(res, 422, 'invalid_range');
      expect(res.body.details).toEqual([{ field: 'until', message: 'must be after since' }]);
    }
    const later = await http.post(`/v1/webhooks/${hook.body.id}/recover`, { since, until: '2026-05-01t09:00:00z' });
    expect(later.status).toBe(202);
  });

  it('refuses a read/write key on an admin-only webhook (403)', async () => {
    const admin = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const made = await admin.post('/v1/keys', { name: 'read/write', scopes: ['read', 'write'] });
    const rw = admin.withKey(made.body.secret);
    const hook = await admin.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['category.created'] });
    const refused = await rw.post(`/v1/webhooks/${hook.body.id}/recover`, { since: '2020-01-01T00:00:00Z' });
    expectErrorBody(refused, 403, 'insufficient_scope');
  });

  it('answers 400 naming `since` for a missing, malformed or non-existent time', async () => {
    const http = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const hook = await http.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['category.created'] });
    for (const body of [{}, { since: 'yesterday' }, { since: '2026-05-01' }, { since: '2026-02-30T00:00:00Z' }]) {
      const res = await http.post(`/v1/webhooks/${hook.body.id}/recover`, body);
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'since' })]);
    }
  });

  describe('bounds (issue 60: 3 calls made 1,309 POSTs from 136 failed events)', () => {
    /** The webhook's deliveries, once none is pending (read from the database: a Free account's budget is small). */
    async function settled(hookId: number, count: number) {
      const db = api.app.get(DataSource);
      return eventually(async () => {
        const [row] = await db.query(
          `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'pending')::int AS pending
             FROM webhook_deliveries WHERE webhook_id = $1`,
          [hookId],
        );
        return row.n === count && row.pending === 0 ? row : undefined;
      }, 30_000);
    }

    it('with a receiver that always fails, an event gets one delivery’s attempts plus one POST per recover an hour, however many calls', async () => {
      const { accountId, apiKey } = await createAccount(api);
      const http = new HttpClient(api.url, apiKey);
      const receiver = await new WebhookReceiver(() => 500).start();
      receivers.push(receiver);
      const hook = (await http.post('/v1/webhooks', { url: receiver.url, events: ['category.created'] })).body;
      const since = new Date(Date.now() - 1_000).toISOString();
      for (const name of ['a', 'b']) expect((await http.post('/v1/categories', { name })).status).toBe(201);
      await settled(hook.id, 2);
      const outage = receiver.requests.length;

      const calls = 3;
      const queued: number[] = [];
      for (let i = 0; i < calls; i++) {
        const recovered = await http.post(`/v1/webhooks/${hook.id}/recover`, { since });
        expect(recovered.status).toBe(202);
        queued.push(recovered.body.queued);
        // Until its resends have given up (past their event's horizon: one attempt each).
        await settled(hook.id, 2 + queued.reduce((a, b) => a + b, 0));
        await webhooksSettled(api.app.get(DataSource), accountId);
      }
      // The next calls are within the hour: nothing more is resent.
      expect(queued).toEqual([2, 0, 0]);
      const count = (ids: unknown[]) => {
        const n = new Map<string, number>();
        for (const id of ids) n.set(String(id), (n.get(String(id)) ?? 0) + 1);
        return n;
      };
      const perEvent = count(webhookIds(receiver, 0));
      const after = count(webhookIds(receiver, outage));
      expect([...after.values()]).toEqual([1, 1]);
      // docs/security.md's bound: a delivery's attempts before the horizon (33 with the defaults) + 1 per resend.
      const bound = maxAttempts(Number(ENV.WEBHOOK_BACKOFF_MS), Number(ENV.WEBHOOK_MAX_AGE_SECONDS) * 1000) + 1;
      expect(perEvent.size).toBe(2);
      for (const n of perEvent.values()) expect(n).toBeLessThanOrEqual(bound);
    });

    it('queues at most the plan’s number of events a call (Free: 100), the rest on the next call', async () => {
      const { accountId, apiKey } = await createAccount(api, 'free');
      const http = new HttpClient(api.url, apiKey);
      const receiver = await new WebhookReceiver(() => 500).start();
      receivers.push(receiver);
      const hook = (await http.post('/v1/webhooks', { url: receiver.url, events: ['category.created'] })).body;
      const since = new Date(Date.now() - 1_000).toISOString();
      const cap = PLAN_RECOVER_PER_CALL.free;
      // Through the service (the Free plan's 60 requests a minute would not make them), all at once: an event recorded
      // after the webhook is disabled (its first delivery out of retries) gets no delivery.
      const categories = api.app.get(CategoriesService);
      await Promise.all(Array.from({ length: cap + 1 }, (_, i) => categories.create(accountId, { name: `lost ${i}` })));
      await settled(hook.id, cap + 1);

      const first = await http.post(`/v1/webhooks/${hook.id}/recover`, { since });
      expect(first.body).toEqual({ queued: cap, skipped: 0, more: true });
      const second = await http.post(`/v1/webhooks/${hook.id}/recover`, { since });
      expect(second.body).toEqual({ queued: 1, skipped: 0, more: false });
    });
  });

  it('answers 404 for another account’s webhook', async () => {
    const owner = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const other = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const hook = await owner.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['category.created'] });
    expectErrorBody(
      await other.post(`/v1/webhooks/${hook.body.id}/recover`, { since: '2020-01-01T00:00:00Z' }),
      404,
      'not_found',
    );
  });
});
