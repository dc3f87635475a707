import { INestApplicationContext } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { PetstoreClient } from '@petstore/client';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import {
  CREATED_AT_US,
  DeliverWebhookBatchJob,
  DeliverWebhookJob,
  EventFanOutService,
  generateWebhookSecret,
  WebhookQueue,
} from '@app/webhooks';
import { EventQueue } from '@app/events';
import { RetentionJob } from '@app/jobs';
import { rootLogger } from '@app/observability';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { eventually, HttpClient } from '../../support/http';
import { isSignedBy, WebhookReceiver } from '@app/testing';
import { expectErrorBody } from '../../support/expect-error';
import { jobRuns, noJobsOf, sweepPasses, webhooksSettled } from '../../support/quiescence';
import { describeWithPython, verifyWithGuidePython } from '../../support/guide-python';

const ENV = {
  ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
  WEBHOOK_BACKOFF_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
  // Short enough to watch a webhook get disabled, long enough for the retry tests.
  WEBHOOK_MAX_AGE_SECONDS: '3',
  // The lost-job sweep passes often enough to watch it give a delivery its job back.
  SWEEP_INTERVAL_MS: '500',
  // Retention runs often enough to watch a delivery's attempts go with it.
  RETENTION_INTERVAL_MS: '500',
};

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

    // The worker records the attempt after the receiver has answered: read once it has.
    const deliveries = await eventually(async () => {
      const list = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return list.status !== 200 || list.body[0]?.status !== 'pending' ? list : undefined;
    });
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

  it('answers the creation with Location naming the webhook', async () => {
    const http = await account();
    const res = await http.post('/v1/webhooks', { url: 'http://127.0.0.1:1/located', events: ['pet.created'] });
    expect(res.status).toBe(201);
    secrets.push(res.body.secret);
    expect(res.headers.get('location')).toBe(`/v1/webhooks/${res.body.id}`);
    const read = await http.get(res.headers.get('location') as string);
    expect(read.body).toEqual(expect.objectContaining({ id: res.body.id, url: 'http://127.0.0.1:1/located' }));
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

  it('lists every attempt of a delivery with its status, duration, answer excerpt and error, in keyset pages', async () => {
    const http = await account();
    const flaky = await receiver((n) => (n <= 2 ? 500 : 200));
    flaky.answerBody = `busy ${'y'.repeat(1500)}`;
    const hook = await subscribe(http, flaky.url, ['api_key.revoked']);
    await createAndRevokeKey(http);
    const delivery = await eventually(async () => {
      const res = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return res.body[0]?.status === 'delivered' && res.body[0];
    });

    const path = `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/attempts`;
    const first = await http.get(`${path}?limit=2`);
    expect(first.status).toBe(200);
    expect(first.headers.get('link')).toBe(`<${path}?limit=2&after=2>; rel="next"`);
    const rest = await http.get(`${path}?limit=2&after=2`);
    expect(rest.headers.get('link')).toBeNull();
    const attempts = [...first.body, ...rest.body];
    const excerpt = flaky.answerBody.slice(0, 1024);
    expect(attempts).toEqual([
      {
        attempt: 1,
        attemptedAt: expect.any(String),
        statusCode: 500,
        durationMs: expect.any(Number),
        responseExcerpt: excerpt,
        error: 'HTTP 500',
      },
      {
        attempt: 2,
        attemptedAt: expect.any(String),
        statusCode: 500,
        durationMs: expect.any(Number),
        responseExcerpt: excerpt,
        error: 'HTTP 500',
      },
      {
        attempt: 3,
        attemptedAt: delivery.lastAttemptAt,
        statusCode: 200,
        durationMs: delivery.lastDurationMs,
        responseExcerpt: excerpt,
        error: null,
      },
    ]);
    expect(Date.parse(attempts[0].attemptedAt)).toBeLessThan(Date.parse(attempts[1].attemptedAt));
    // The SDK reads them too, every page.
    const sdk = new PetstoreClient({
      apiKey: http.defaultKey!,
      baseUrl: api.url,
      headers: { 'X-Forwarded-For': http.clientIp },
    });
    const read = [];
    for await (const a of sdk.webhooks.attempts(hook.id, delivery.id, { limit: 1 })) read.push(a.attempt);
    expect(read).toEqual([1, 2, 3]);
  });

  it('answers 404 for the attempts of an unknown delivery, another webhook’s or another account’s', async () => {
    const http = await account();
    const r = await receiver();
    const hook = await subscribe(http, r.url, ['pet.created']);
    const other = await subscribe(http, r.url, ['pet.created']);
    const test = await http.post(`/v1/webhooks/${hook.id}/test`);
    await eventually(async () => r.requests[0]);
    const stranger = await account();
    for (const res of [
      await http.get(`/v1/webhooks/${hook.id}/deliveries/999999999/attempts`),
      await http.get(`/v1/webhooks/${other.id}/deliveries/${test.body.id}/attempts`),
      await stranger.get(`/v1/webhooks/${hook.id}/deliveries/${test.body.id}/attempts`),
    ]) {
      expectErrorBody(res, 404, 'not_found');
    }
  });

  it('removes a delivery’s attempts once retention removed the delivery, not before', async () => {
    const http = await account();
    const r = await receiver();
    const hook = await subscribe(http, r.url, ['pet.created']);
    const ids: number[] = [];
    for (let i = 0; i < 2; i++) ids.push((await http.post(`/v1/webhooks/${hook.id}/test`)).body.id);
    const [expired, kept] = ids;
    const db = api.app.get(DataSource);
    const attemptsOf = async (id: number) =>
      (await db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = $1`, [id]))[0].n;
    await eventually(async () => (await Promise.all(ids.map(attemptsOf))).every((n) => n === 1));
    // Past RETENTION_WEBHOOK_DELIVERIES_DAYS (30): both attempts, and the first delivery. (A deleted webhook's go with
    // it at once: test/security/webhook-admin-only.e2e-spec.ts.)
    await db.query(
      `UPDATE webhook_delivery_attempts SET attempted_at = now() - interval '31 days' WHERE delivery_id = ANY($1)`,
      [ids],
    );
    // Deliveries go with their partition (test/e2e/worker/retention.e2e-spec.ts drops real ones); here the row alone.
    await db.query(`DELETE FROM webhook_deliveries WHERE id = $1`, [expired]);

    await eventually(async () => (await attemptsOf(expired)) === 0, 10_000);
    await jobRuns(worker, RetentionJob, 2); // the attempt of a delivery still listed stays
    expect((await http.get(`/v1/webhooks/${hook.id}/deliveries/${kept}/attempts`)).body).toHaveLength(1);
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

    const accountId = lastAccountId;
    expect((await http.delete(`/v1/webhooks/${hook.id}`)).status).toBe(204);
    await noJobsOf(webhookQueue(), accountId, ['active']); // an attempt already in flight may still land
    const seen = failing.requests.length;
    await noJobsOf(webhookQueue(), accountId); // the retries it had scheduled have come due
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
    await sweepPasses(worker, 3); // a delivered row is not sent again
    expect(r.requests.filter(isSwept)).toHaveLength(1);
    expect((await http.get(`/v1/webhooks/${hook.id}/deliveries/${row.id}/attempts`)).body).toHaveLength(1);
  });

  /** Three api_key.created events and their deliveries to `hookId` as one fan-out writes them: one created_at. */
  async function fannedOutTogether(http: HttpClient, hookId: number, age: string) {
    for (let i = 0; i < 3; i++) await createAndRevokeKey(http);
    const db = api.app.get(DataSource);
    const rows: { id: number; eventId: number; createdAtUs: string }[] = await db.query(
      `INSERT INTO webhook_deliveries AS d (webhook_id, account_id, event_id, event_type, created_at)
       SELECT $1, e.account_id, e.id, e.type, now() - $3::interval FROM events e
        WHERE e.id IN (SELECT id FROM events WHERE account_id = $2 AND type = 'api_key.created' ORDER BY id DESC LIMIT 3)
        ORDER BY e.id
       RETURNING d.id, d.event_id AS "eventId", ${CREATED_AT_US}`,
      [hookId, lastAccountId, age],
    );
    expect(rows).toHaveLength(3);
    return rows;
  }
  const webhookQueue = () => api.app.get<Queue>(getQueueToken(WebhookQueue.name), { strict: false });
  const attemptsOf = async (http: HttpClient, hookId: number, deliveryId: number) =>
    (await http.get(`/v1/webhooks/${hookId}/deliveries/${deliveryId}/attempts`)).body as { statusCode: number }[];

  it('gives a lost fan-out batch its one job again (the lost-job sweep): each delivery once, in event order', async () => {
    const http = await account();
    const r = await receiver();
    const hook = await subscribe(http, r.url, ['pet.created']);
    const rows = await fannedOutTogether(http, hook.id, '1 minute');
    const isSwept = (q: { body: string }) => JSON.parse(q.body).type === 'api_key.created';

    await eventually(async () => r.requests.filter(isSwept).length === 3, 10_000);
    expect(r.requests.filter(isSwept).map((q) => Number(q.headers['petstore-event-id']))).toEqual(
      rows.map((d) => d.eventId),
    );
    await sweepPasses(worker, 3); // nothing is sent again
    expect(r.requests.filter(isSwept)).toHaveLength(3);
    for (const d of rows) expect(await attemptsOf(http, hook.id, d.id)).toHaveLength(1);
    // One job for the three, not a job per delivery.
    const queue = webhookQueue();
    expect(
      await queue.getJob(DeliverWebhookBatchJob.jobId({ ...rows[0], webhookId: hook.id, accountId: 0 })),
    ).toBeDefined();
    for (const d of rows)
      expect(
        await queue.getJob(DeliverWebhookJob.jobId({ accountId: 0, deliveryId: d.id, attempt: 0 })),
      ).toBeUndefined();
  });

  it('goes on with a batch after a failed delivery: the rest are sent, the failed one retried, every attempt recorded', async () => {
    const http = await account();
    const r = await receiver((n) => (n === 2 ? 500 : 200));
    const hook = await subscribe(http, r.url, ['pet.created']);
    const rows = await fannedOutTogether(http, hook.id, '0 seconds');
    const payload = { accountId: lastAccountId, webhookId: hook.id, createdAtUs: rows[0].createdAtUs };
    await webhookQueue().add(DeliverWebhookBatchJob.name, payload, { jobId: DeliverWebhookBatchJob.jobId(payload) });

    await eventually(async () => {
      const list = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return list.body.filter((d: { status: string }) => d.status === 'delivered').length === 3;
    }, 10_000);
    // The first two in order; the failed second one again after its backoff.
    const sent = r.requests.map((q) => Number(q.headers['petstore-event-id']));
    expect(sent.slice(0, 2)).toEqual([rows[0].eventId, rows[1].eventId]);
    expect(sent.filter((id) => id === rows[1].eventId)).toHaveLength(2);
    expect(sent).toHaveLength(4);
    expect((await attemptsOf(http, hook.id, rows[1].id)).map((a) => a.statusCode).sort()).toEqual([200, 500]);
    for (const d of [rows[0], rows[2]]) expect(await attemptsOf(http, hook.id, d.id)).toHaveLength(1);
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
    await sweepPasses(worker, 3); // sent once
    expect(r.requests.filter((q) => q.headers['petstore-event-id'] === String(lost.id))).toHaveLength(1);
  });

  it('fans out the events an account records while its fan-out job waits in that one job, in event order', async () => {
    const http = await account();
    const r = await receiver();
    await subscribe(http, r.url, ['api_key.created', 'api_key.revoked']);
    const events = api.app.get<Queue>(getQueueToken(EventQueue.name), { strict: false });
    await events.pause();
    try {
      await createAndRevokeKey(http);
      await createAndRevokeKey(http);
      const waiting = await events.getJobs(['waiting']);
      expect(waiting.filter((job) => job.data.accountId === lastAccountId)).toHaveLength(1);
    } finally {
      await events.resume();
    }
    await eventually(async () => r.requests.length === 4, 10_000);
    const sent = r.requests.map((q) => Number(q.headers['petstore-event-id']));
    expect(sent).toEqual([...sent].sort((x, y) => x - y));
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

  it('reads and changes a webhook: description, events (api_key.* need admin), URL through the guard, enabled', async () => {
    const owner = await account();
    const r = await receiver();
    const created = await owner.post('/v1/webhooks', {
      url: r.url,
      events: ['category.created'],
      description: 'catalog sync',
    });
    expect(created.status).toBe(201);
    secrets.push(created.body.secret);
    const id = created.body.id;
    const got = await owner.get(`/v1/webhooks/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(
      expect.objectContaining({
        id,
        url: r.url,
        description: 'catalog sync',
        status: 'active',
        previousSecretExpiresAt: null,
      }),
    );
    expect(JSON.stringify(got.body)).not.toContain('whsec_');

    const changed = await owner.patch(`/v1/webhooks/${id}`, { events: ['pet.created'], description: null });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual(expect.objectContaining({ events: ['pet.created'], description: null, url: r.url }));

    // A new URL passes the creation's check, with the guard's reason when refused.
    const notHttp = await owner.patch(`/v1/webhooks/${id}`, { url: 'ftp://hook.example/x' });
    expect(notHttp.status).toBe(400);
    expect(notHttp.body).toEqual(
      expect.objectContaining({
        code: 'validation_failed',
        details: [{ field: 'url', message: 'must use http or https' }],
      }),
    );

    const noAdmin = owner.withKey((await owner.post('/v1/keys', { name: 'w', scopes: ['read', 'write'] })).body.secret);
    const refused = await noAdmin.patch(`/v1/webhooks/${id}`, { events: ['api_key.created'] });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('insufficient_scope');
    expect((await owner.patch(`/v1/webhooks/${id}`, { events: ['api_key.created'] })).status).toBe(200);
    // Where api_key.* events go is an admin's call: a write key may not move the URL.
    const moved = await noAdmin.patch(`/v1/webhooks/${id}`, { url: 'http://127.0.0.1:1/elsewhere' });
    expect(moved.status).toBe(403);
    expect(moved.body.message).toBe(
      'This webhook is visible to admin keys only, and this API key lacks the admin scope',
    );

    const disabled = await owner.patch(`/v1/webhooks/${id}`, { enabled: false });
    expect(disabled.body).toEqual(expect.objectContaining({ status: 'disabled', disabledAt: expect.any(String) }));
    await createAndRevokeKey(owner); // an api_key.created event, not sent to a disabled webhook
    const db = api.app.get(DataSource);
    const accountId = lastAccountId;
    await eventually(
      async () =>
        (await db.query('SELECT bool_and(fanned_out) AS done FROM events WHERE account_id = $1', [accountId]))[0].done,
    );
    const enabled = await owner.patch(`/v1/webhooks/${id}`, { enabled: true, description: 'keys' });
    expect(enabled.body).toEqual(expect.objectContaining({ status: 'active', disabledAt: null, description: 'keys' }));
    await createAndRevokeKey(owner);
    await eventually(async () => r.requests.length > 0);
    await webhooksSettled(db, accountId);
    expect(r.requests).toHaveLength(1);
    expect((await owner.patch(`/v1/webhooks/${id}`, { enabled: 'yes' })).status).toBe(400);
  });

  it('rotates the secret: shown once, both secrets sign during the grace, the old one stops after it', async () => {
    const http = await account();
    const r = await receiver();
    const hook = await subscribe(http, r.url, ['pet.created']);
    expect((await http.patch(`/v1/webhooks/${hook.id}`, { enabled: false })).status).toBe(200);

    const rotated = await http.post(`/v1/webhooks/${hook.id}/rotate`, {});
    expect(rotated.status).toBe(201);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    const { secret } = rotated.body;
    secrets.push(secret);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(hook.secret);
    const graceEnds = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(graceEnds).toBeGreaterThan(86_300_000);
    expect(graceEnds).toBeLessThanOrEqual(86_400_000);
    expect(rotated.body.status).toBe('disabled'); // a disabled webhook rotates too

    const delivered = async () => {
      const before = r.requests.length;
      expect((await http.post(`/v1/webhooks/${hook.id}/test`)).status).toBe(202);
      return eventually(async () => r.requests[before]);
    };
    const during = await delivered();
    expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    const headers = during.headers as Record<string, string>;
    for (const s of [secret, hook.secret]) {
      expect(new Webhook(s).verify(during.body, headers)).toEqual(JSON.parse(during.body));
      expect(isSignedBy(s, during.body, headers)).toBe(true);
    }
    expect(during.headers['petstore-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);

    const again = await http.post(`/v1/webhooks/${hook.id}/rotate`, { gracePeriodSeconds: 0 });
    expect(again.status).toBe(201);
    secrets.push(again.body.secret);
    expect(again.body.previousSecretExpiresAt).toBeNull();
    const after = await delivered();
    expect(new Webhook(again.body.secret).verify(after.body, after.headers as Record<string, string>)).toBeTruthy();
    for (const old of [secret, hook.secret]) expect(isSignedBy(old, after.body, after.headers)).toBe(false);

    expect((await http.post(`/v1/webhooks/${hook.id}/rotate`, { gracePeriodSeconds: 604_801 })).status).toBe(400);
  });

  it('resends a delivery as a new one with the same webhook-id; lists each attempt’s status, duration and answer', async () => {
    const http = await account();
    const accountId = lastAccountId;
    const r = await receiver();
    r.answerBody = `thanks ${'x'.repeat(2000)}`;
    const hook = await subscribe(http, r.url, ['api_key.revoked']);
    await createAndRevokeKey(http);
    const first = await eventually(async () => r.requests[0]);
    const [delivery] = await eventually(async () => {
      const list = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return list.body[0]?.status === 'delivered' && list.body;
    });
    expect(delivery).toEqual(
      expect.objectContaining({ lastStatusCode: 200, lastDurationMs: expect.any(Number), resendOf: null }),
    );
    expect(delivery.lastResponseExcerpt).toBe(r.answerBody.slice(0, 1024));

    const key = { headers: { 'Idempotency-Key': `resend-${delivery.id}` } };
    const resent = await http.post(`/v1/webhooks/${hook.id}/deliveries/${delivery.id}/resend`, undefined, key);
    expect(resent.status).toBe(202);
    expect(resent.body).toEqual(
      expect.objectContaining({ eventId: delivery.eventId, status: 'pending', attempts: 0, resendOf: delivery.id }),
    );
    // A retried request with its key resends nothing more.
    const replay = await http.post(`/v1/webhooks/${hook.id}/deliveries/${delivery.id}/resend`, undefined, key);
    expect(replay.body.id).toBe(resent.body.id);
    const second = await eventually(async () => r.requests[1]);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    expect(new Webhook(hook.secret).verify(second.body, second.headers as Record<string, string>)).toBeTruthy();

    // A resend of the resend names the first delivery.
    const third = await http.post(`/v1/webhooks/${hook.id}/deliveries/${resent.body.id}/resend`);
    expect(third.body.resendOf).toBe(delivery.id);
    await eventually(async () => r.requests[2]);
    await webhooksSettled(api.app.get(DataSource), accountId);
    expect(r.requests.map((q) => q.headers['webhook-id'])).toEqual(Array(3).fill(first.headers['webhook-id']));
    const list = (await http.get(`/v1/webhooks/${hook.id}/deliveries`)).body;
    expect(list.map((d: { resendOf: number | null }) => d.resendOf)).toEqual([null, delivery.id, delivery.id]);

    const other = await account();
    const otherHook = await subscribe(http, r.url, ['pet.created']);
    for (const res of [
      await http.post(`/v1/webhooks/${hook.id}/deliveries/999999999/resend`),
      await http.post(`/v1/webhooks/${otherHook.id}/deliveries/${delivery.id}/resend`),
      await other.post(`/v1/webhooks/${hook.id}/deliveries/${delivery.id}/resend`),
      await other.get(`/v1/webhooks/${hook.id}`),
      await other.patch(`/v1/webhooks/${hook.id}`, { description: 'mine' }),
      await other.post(`/v1/webhooks/${hook.id}/rotate`),
    ]) {
      expect(res.status).toBe(404);
    }
    await webhooksSettled(api.app.get(DataSource), accountId);
    expect(r.requests).toHaveLength(3);
  });

  it('keeps each account’s webhooks to itself (404 on another account’s)', async () => {
    const owner = await account();
    const ownerId = lastAccountId;
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
    for (const id of [ownerId, lastAccountId]) await webhooksSettled(api.app.get(DataSource), id);
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
      doc.paths['/webhooks/{webhookId}'].get,
      doc.paths['/webhooks/{webhookId}'].patch,
      doc.paths['/webhooks/{webhookId}/rotate'].post,
      doc.paths['/webhooks/{webhookId}/deliveries/{deliveryId}/resend'].post,
    ];
    for (const op of ops) {
      expect(op['x-stability']).toBe('experimental');
      expect(op.tags).toEqual(['Webhooks']);
    }
  });

  describeWithPython('the guide’s Python verifier (standard library only)', () => {
    it('verifies a delivery the service sent, and refuses it under another secret', async () => {
      const http = await account();
      const r = await receiver();
      const hook = await subscribe(http, r.url, ['api_key.revoked']);
      await createAndRevokeKey(http);
      const { headers, body } = await eventually(async () => r.requests[0]);
      const answers = verifyWithGuidePython([
        { secret: hook.secret, headers, body },
        { secret: generateWebhookSecret(), headers, body },
      ]);
      expect(answers).toEqual([{ event: JSON.parse(body) }, { error: 'no matching signature' }]);
    });
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

    it('the 400 for a private URL names `npx petstore listen` and the setting ALLOW_PRIVATE_WEBHOOK_URLS', async () => {
      const http = new HttpClient(strict.url, (await createAccount(strict)).apiKey);
      const created = await http.post('/v1/webhooks', {
        url: 'http://localhost:4242/webhook',
        events: ['pet.created'],
      });
      const hook = await http.post('/v1/webhooks', { url: 'http://93.184.215.14/hook', events: ['pet.created'] });
      secrets.push(hook.body.secret);
      const changed = await http.patch(`/v1/webhooks/${hook.body.id}`, { url: 'http://127.0.0.1:4242/webhook' });
      for (const res of [created, changed]) {
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(
          /^url: must not target a private, loopback, link-local or reserved address\. /,
        );
        expect(res.body.message).toContain('npx petstore listen --base-url <this API> --forward-to <your local URL>');
        expect(res.body.message).toContain('ALLOW_PRIVATE_WEBHOOK_URLS=true');
      }
      // Another reason: no hint.
      const ftp = await http.post('/v1/webhooks', { url: 'ftp://example.com/hook', events: ['pet.created'] });
      expect(ftp.body.message).toBe('url: must use http or https');
    });

    it('checks a changed URL again: a private address is refused with the reason', async () => {
      const http = new HttpClient(strict.url, (await createAccount(strict)).apiKey);
      const hook = await http.post('/v1/webhooks', { url: 'http://93.184.215.14/hook', events: ['pet.created'] });
      expect(hook.status).toBe(201);
      secrets.push(hook.body.secret);
      const res = await http.patch(`/v1/webhooks/${hook.body.id}`, { url: 'http://10.0.0.8/hook' });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([
        { field: 'url', message: 'must not target a private, loopback, link-local or reserved address' },
      ]);
      expect((await http.get(`/v1/webhooks/${hook.body.id}`)).body.url).toBe('http://93.184.215.14/hook');
    });
  });

  it('never writes a webhook secret to the logs', async () => {
    const logFile = api.config.logFile;
    expect(logFile).toBeDefined();
    await new Promise<void>((resolve, reject) =>
      rootLogger(api.config, 'api').flush((err) => (err ? reject(err) : resolve())),
    );
    const log = readFileSync(logFile as string, 'utf8');
    expect(secrets.length).toBeGreaterThan(5);
    for (const s of secrets) expect(log).not.toContain(s);
  });
});
