import { createHmac } from 'node:crypto';
import { isSignedBy } from '../../../test/support/webhook-receiver';
import { generateWebhookSecret, signatureHeader } from './signature';

describe('webhook signature', () => {
  const secret = 'whsec_test-secret';
  const body = '{"id":1,"type":"pet.created"}';
  const now = new Date('2026-11-22T10:00:00Z');

  it('is t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', () => {
    const t = now.getTime() / 1000;
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(signatureHeader(secret, body, now)).toBe(`t=${t},v1=${expected}`);
  });

  it('verifies with the secret and only with it (by the SDK)', () => {
    const header = signatureHeader(secret, body, now);
    expect(isSignedBy(secret, body, header, 300, now)).toBe(true);
    expect(isSignedBy('whsec_other', body, header, 300, now)).toBe(false);
    expect(isSignedBy(secret, body.replace('1', '2'), header, 300, now)).toBe(false);
    expect(isSignedBy(secret, body, header.replace(/v1=../, 'v1=00'), 300, now)).toBe(false);
    expect(isSignedBy(secret, body, undefined, 300, now)).toBe(false);
    expect(isSignedBy(secret, body, 'garbage', 300, now)).toBe(false);
  });

  it('refuses a timestamp outside the tolerance (replays)', () => {
    const header = signatureHeader(secret, body, now);
    expect(isSignedBy(secret, body, header, 300, new Date(now.getTime() + 299_000))).toBe(true);
    expect(isSignedBy(secret, body, header, 300, new Date(now.getTime() + 301_000))).toBe(false);
  });

  it('generates distinct high-entropy secrets', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});
