import { INestApplicationContext } from '@nestjs/common';
import { IncomingHttpHeaders } from 'node:http';
import { verifyWebhook, VerifyWebhookOptions, WebhookSignatureError } from '@petstore/client';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../support/test-apps';
import { eventually, HttpClient } from '../support/http';
import { ReceivedRequest, WebhookReceiver } from '@app/testing';

const ENV = { ALLOW_PRIVATE_WEBHOOK_URLS: 'true' };

/** What an attacker does with a captured delivery: drops the Standard Webhooks headers, sets ids of its choosing. */
function stripped(req: ReceivedRequest, ids: Record<string, string> = {}): IncomingHttpHeaders {
  const headers = { ...req.headers };
  for (const name of ['webhook-signature', 'webhook-timestamp', 'webhook-id']) delete headers[name];
  return { ...headers, ...ids };
}

/**
 * The SDK's legacy fallback (Petstore-Signature covers only "<t>.<body>") on deliveries the worker
 * really sent: off by default, and opted in it binds the ids receivers de-duplicate on to the signed body.
 */
describe('the SDK on a captured delivery replayed under a new webhook-id', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  let receiver: WebhookReceiver;
  let secret: string;
  let event: ReceivedRequest;
  let test: ReceivedRequest;

  /** The SDK's refusal reason, or 'accepted'. */
  function verdict(req: ReceivedRequest, options: Partial<VerifyWebhookOptions> = {}): string {
    try {
      verifyWebhook({ payload: req.body, headers: req.headers, secret, ...options });
      return 'accepted';
    } catch (err) {
      if (err instanceof WebhookSignatureError) return err.reason;
      throw err;
    }
  }

  const inAnHour = () => new Date(Date.now() + 3_600_000);

  beforeAll(async () => {
    api = await startApi(ENV);
    worker = await startWorker(ENV);
    receiver = await new WebhookReceiver().start();
    const http = new HttpClient(api.url, (await createAccount(api)).apiKey);
    const hook = await http.post('/v1/webhooks', { url: receiver.url, events: ['api_key.created'] });
    secret = hook.body.secret;
    expect((await http.post('/v1/keys', { name: 'an event' })).status).toBe(201);
    event = await eventually(async () => receiver.requests.find((r) => JSON.parse(r.body).type === 'api_key.created'));
    expect((await http.post(`/v1/webhooks/${hook.body.id}/test`)).status).toBe(202);
    test = await eventually(async () => receiver.requests.find((r) => JSON.parse(r.body).type === 'webhook.test'));
  });
  afterAll(() => closeAll([() => receiver?.close(), () => worker?.close(), () => api?.close()]));

  it('the captured deliveries carry both signatures and verify as sent', () => {
    for (const req of [event, test]) {
      expect(req.headers['petstore-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verdict(req)).toBe('accepted');
    }
  });

  it('refuses by default a delivery signed only with Petstore-Signature, under a new webhook-id', () => {
    const replay = { ...event, headers: stripped(event, { 'webhook-id': 'replay-1' }) };
    expect(verdict(replay)).toBe('missing_header');
  });

  it('refuses by default a delivery signed only with Petstore-Signature, under its own ids', () => {
    expect(
      verdict({ ...event, headers: stripped(event, { 'webhook-id': event.headers['webhook-id'] as string }) }),
    ).toBe('missing_header');
  });

  it("opted in (legacyUntil), accepts a legacy-only delivery whose ids are its signed event's", () => {
    const options = { legacyUntil: inAnHour() };
    const own = (req: ReceivedRequest) => stripped(req, { 'webhook-id': req.headers['webhook-id'] as string });
    expect(verdict({ ...event, headers: own(event) }, options)).toBe('accepted');
    expect(verdict({ ...test, headers: own(test) }, options)).toBe('accepted');
    // As a server from before Standard Webhooks sent it: Petstore-Event-Id alone.
    expect(verdict({ ...event, headers: stripped(event) }, options)).toBe('accepted');
  });

  it('opted in, refuses a legacy-only delivery under a new webhook-id or Petstore-Event-Id', () => {
    const options = { legacyUntil: inAnHour() };
    expect(verdict({ ...event, headers: stripped(event, { 'webhook-id': 'replay-1' }) }, options)).toBe('mismatch');
    expect(verdict({ ...event, headers: stripped(event, { 'petstore-event-id': 'replay-2' }) }, options)).toBe(
      'mismatch',
    );
    expect(verdict({ ...test, headers: stripped(test, { 'webhook-id': 'test-999999' }) }, options)).toBe('mismatch');
  });

  it('opted in, refuses a legacy-only delivery that names no id at all', () => {
    const headers = stripped(event);
    delete headers['petstore-event-id'];
    expect(verdict({ ...event, headers }, { legacyUntil: inAnHour() })).toBe('missing_header');
  });

  it('refuses a legacy-only delivery once the opt-in date has passed', () => {
    const headers = stripped(event, { 'webhook-id': event.headers['webhook-id'] as string });
    expect(verdict({ ...event, headers }, { legacyUntil: new Date(Date.now() - 1_000) })).toBe('missing_header');
  });
});
