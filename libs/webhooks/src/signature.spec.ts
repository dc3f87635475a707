import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { LEGACY_SIGNATURE_SUNSET, verifyWebhook, VerifyWebhookOptions, WebhookSignatureError } from '@petstore/client';
import { loadConfig } from '@app/config';
import { generateWebhookSecret, legacySignatureHeader, standardWebhookHeaders } from './signature';

const body = '{"id":42,"type":"pet.created","data":{"id":3}}';
const now = new Date('2026-11-22T10:00:00Z');
/** A secret as made before Standard Webhooks: `whsec_` + base64url (with a `-` and a `_`, which the standard's libraries refuse). */
const oldSecret = `whsec_-_${randomBytes(32).toString('base64url').slice(2)}`;
/** The same bytes in standard base64, padded: what the migration guide tells its holder to use. */
const standardSpelling = (s: string) => `${s.replaceAll('-', '+').replaceAll('_', '/').replace('whsec/', 'whsec_')}=`;

/** The SDK's refusal reason, or 'accepted'. */
function verdict(options: Partial<VerifyWebhookOptions> & Pick<VerifyWebhookOptions, 'secret' | 'headers'>): string {
  try {
    verifyWebhook({ payload: body, now, ...options });
    return 'accepted';
  } catch (err) {
    if (err instanceof WebhookSignatureError) return err.reason;
    throw err;
  }
}

describe('Standard Webhooks signing (the service)', () => {
  it('new secrets are whsec_ + base64 of 32 random bytes, taken as is by the standardwebhooks package', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(generateWebhookSecret()).not.toBe(secret);
    expect(() => new Webhook(secret)).not.toThrow();
  });

  it('webhook-signature is v1,<base64 HMAC-SHA256 of "id.timestamp.body">, as the standardwebhooks package signs', () => {
    const secret = generateWebhookSecret();
    expect(standardWebhookHeaders([secret], '42', body, now)).toEqual({
      'webhook-id': '42',
      'webhook-timestamp': String(now.getTime() / 1000),
      'webhook-signature': new Webhook(secret).sign('42', now, body),
    });
  });

  it('the standardwebhooks package verifies a delivery under either secret of a rotation, and under no other', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = standardWebhookHeaders([current, previous], '42', body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow('No matching signature');
    expect(() => new Webhook(current).verify(body.replace('3', '4'), headers)).toThrow('No matching signature');
  });

  it('an old secret signs with the bytes it encodes: its standard spelling verifies with the package', () => {
    const headers = standardWebhookHeaders([oldSecret], '42', body);
    expect(() => new Webhook(oldSecret)).toThrow();
    expect(new Webhook(standardSpelling(oldSecret)).verify(body, headers)).toEqual(JSON.parse(body));
    // One without `-` or `_` is taken as is by the JavaScript library (it decodes unpadded base64): the same key.
    const plain = `whsec_${'A'.repeat(43)}`;
    expect(new Webhook(plain).verify(body, standardWebhookHeaders([plain], '42', body))).toEqual(JSON.parse(body));
  });

  it('the legacy Petstore-Signature is t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>, one v1 per secret', () => {
    const t = now.getTime() / 1000;
    const hex = (s: string) => createHmac('sha256', s).update(`${t}.${body}`).digest('hex');
    expect(legacySignatureHeader([oldSecret], body, now)).toBe(`t=${t},v1=${hex(oldSecret)}`);
    expect(legacySignatureHeader(['a', 'b'], body, now)).toBe(`t=${t},v1=${hex('a')},v1=${hex('b')}`);
  });

  it('signs as createHmac does with a secret longer than a SHA-256 block and a body beyond ASCII', () => {
    const t = now.getTime() / 1000;
    const long = `whsec_${'x'.repeat(100)}`;
    const accented = '{"name":"Çà et là 🐈"}';
    const hex = createHmac('sha256', long).update(`${t}.${accented}`).digest('hex');
    expect(legacySignatureHeader([long], accented, now)).toBe(`t=${t},v1=${hex}`);
  });
});

describe('the SDK verifyWebhook', () => {
  const secret = generateWebhookSecret();
  const signed = (s = secret, at = now, id = '42') => standardWebhookHeaders([s], id, body, at);

  it('accepts a standard delivery and returns the event: Node headers, fetch Headers, a Buffer body', () => {
    expect(verifyWebhook({ payload: body, headers: signed(), secret, now })).toEqual(JSON.parse(body));
    expect(verdict({ headers: new Headers({ ...signed() }), secret })).toBe('accepted');
    expect(verdict({ payload: Buffer.from(body), headers: signed(), secret })).toBe('accepted');
    expect(verdict({ headers: { 'Webhook-Id': '42', ...signed() }, secret })).toBe('accepted');
  });

  it('accepts what the standardwebhooks package signs, and either signature of a rotation', () => {
    const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(now.getTime() / 1000) };
    const reference = new Webhook(secret).sign(id, now, body);
    expect(verdict({ headers: { ...headers, 'webhook-signature': reference }, secret })).toBe('accepted');
    const other = generateWebhookSecret();
    const both = standardWebhookHeaders([other, secret], id, body, now);
    expect([verdict({ headers: both, secret }), verdict({ headers: both, secret: other })]).toEqual([
      'accepted',
      'accepted',
    ]);
  });

  it('verifies an old (base64url) secret as given or in its standard spelling', () => {
    expect(verdict({ headers: signed(oldSecret), secret: oldSecret })).toBe('accepted');
    expect(verdict({ headers: signed(oldSecret), secret: standardSpelling(oldSecret) })).toBe('accepted');
    expect(verdict({ headers: signed(oldSecret), secret: `whsec_--${oldSecret.slice(8)}` })).toBe('mismatch');
  });

  it.each([
    ['missing_header', {}],
    ['missing_header', { 'webhook-signature': 'v1,AAAA' }],
    ['malformed_header', { ...signed(), 'webhook-timestamp': 'abc' }],
    ['malformed_header', { ...signed(), 'webhook-signature': 'v2,AAAA' }],
    ['mismatch', signed(generateWebhookSecret())],
    ['mismatch', { ...signed(), 'webhook-id': '43' }],
    ['timestamp_out_of_tolerance', signed(secret, new Date(now.getTime() - 301_000))],
    ['timestamp_out_of_tolerance', signed(secret, new Date(now.getTime() + 301_000))],
  ])('refuses with %s', (reason, headers) => {
    expect(verdict({ headers, secret })).toBe(reason);
  });

  it('refuses a tampered body', () => {
    expect(verdict({ payload: body.replace('3', '4'), headers: signed(), secret })).toBe('mismatch');
  });

  describe('a delivery signed only with the legacy Petstore-Signature', () => {
    const event = { id: 42, type: 'pet.created', data: { id: 3 } };
    const legacy = (ids: Record<string, string>, secrets = [secret], payload = body) => ({
      'petstore-signature': legacySignatureHeader(secrets, payload, now),
      ...ids,
    });
    const optIn = { legacyUntil: new Date(now.getTime() + 1_000) };

    it('is refused by default, whatever its ids', () => {
      expect(verdict({ headers: legacy({ 'webhook-id': '42' }), secret })).toBe('missing_header');
      expect(verdict({ headers: legacy({ 'webhook-id': '43' }), secret })).toBe('missing_header');
    });

    it('is accepted opted in (legacyUntil) when its webhook-id and Petstore-Event-Id name the signed event', () => {
      expect(verifyWebhook({ payload: body, headers: legacy({ 'webhook-id': '42' }), secret, now, ...optIn })).toEqual(
        event,
      );
      expect(verdict({ headers: legacy({ 'petstore-event-id': '42' }), secret, ...optIn })).toBe('accepted');
      expect(verdict({ headers: legacy({ 'webhook-id': '42', 'petstore-event-id': '42' }), secret, ...optIn })).toBe(
        'accepted',
      );
    });

    it("binds a test delivery's webhook-id to its signed deliveryId (test-<deliveryId>)", () => {
      const test = JSON.stringify({ id: null, type: 'webhook.test', data: { webhookId: 5, deliveryId: 77 } });
      const headers = (id: string) => legacy({ 'webhook-id': id }, [secret], test);
      expect(verdict({ payload: test, headers: headers('test-77'), secret, ...optIn })).toBe('accepted');
      expect(verdict({ payload: test, headers: headers('test-78'), secret, ...optIn })).toBe('mismatch');
    });

    it("is refused opted in under another webhook-id or Petstore-Event-Id than the signed event's", () => {
      expect(verdict({ headers: legacy({ 'webhook-id': '43' }), secret, ...optIn })).toBe('mismatch');
      expect(verdict({ headers: legacy({ 'webhook-id': '42', 'petstore-event-id': '43' }), secret, ...optIn })).toBe(
        'mismatch',
      );
    });

    it('is refused opted in when it names no id', () => {
      expect(verdict({ headers: legacy({}), secret, ...optIn })).toBe('missing_header');
    });

    it('is refused opted in when signed with another secret or malformed; either secret of a rotation passes', () => {
      const ids = { 'webhook-id': '42' };
      expect(verdict({ headers: legacy(ids), secret: generateWebhookSecret(), ...optIn })).toBe('mismatch');
      expect(verdict({ headers: { ...ids, 'petstore-signature': 't=abc,v1=00' }, secret, ...optIn })).toBe(
        'malformed_header',
      );
      expect(verdict({ headers: legacy(ids, [generateWebhookSecret(), secret]), secret, ...optIn })).toBe('accepted');
    });

    it('is refused once the opt-in date is reached, or when it is not a date', () => {
      const headers = legacy({ 'webhook-id': '42' });
      expect(verdict({ headers, secret, legacyUntil: now })).toBe('missing_header');
      expect(verdict({ headers, secret, legacyUntil: new Date('not a date') })).toBe('missing_header');
    });

    it("the SDK's sunset constant is the service's default", () => {
      expect(LEGACY_SIGNATURE_SUNSET).toEqual(loadConfig({}).webhooks.legacySignatureUntil);
    });
  });
});
