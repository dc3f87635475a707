import { randomBytes } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConfigError, DEVELOPMENT_SECRET_KEY, loadConfig } from '@app/config';
import { SecretBoxError, WebhookSecretBox } from '@app/webhooks';
import { cliWithEnv } from '../support/cli';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../support/test-apps';
import { eventually, HttpClient } from '../support/http';
import { isSignedBy, WebhookReceiver } from '@app/testing';

/**
 * Webhook signing secrets are stored under AES-256-GCM (WEBHOOK_SECRET_KEYS, with a key id), so
 * a database dump or backup does not let anyone forge deliveries.
 */
const OLD = { id: 'k1', key: randomBytes(32) };
const NEW = { id: 'k2', key: randomBytes(32) };
const entry = (k: { id: string; key: Buffer }) => `${k.id}:${k.key.toString('base64')}`;
const ENV = { ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WEBHOOK_SECRET_KEYS: entry(OLD) };
// The operator lists every key a row may be under: in the shared test database, other test files'
// webhooks are sealed under the development key.
const ROTATED = { ...ENV, WEBHOOK_SECRET_KEYS: `${entry(NEW)},${entry(OLD)},${entry(DEVELOPMENT_SECRET_KEY)}` };

describe('webhook secrets at rest', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  let receiver: WebhookReceiver;
  let http: HttpClient;
  let db: DataSource;

  beforeAll(async () => {
    [api, worker, receiver] = await Promise.all([startApi(ENV), startWorker(ENV), new WebhookReceiver().start()]);
    http = new HttpClient(api.url, (await createAccount(api)).apiKey);
    db = api.app.get(DataSource);
  });
  afterAll(() => closeAll([() => receiver?.close(), () => worker?.close(), () => api?.close()]));

  const stored = async (id: number): Promise<string> =>
    (await db.query('SELECT secret FROM webhooks WHERE id = $1', [id]))[0].secret;

  /** A test delivery through the worker, checked against the secret shown at creation. */
  async function expectSignedWith(webhookId: number, secret: string): Promise<void> {
    const before = receiver.requests.length;
    expect((await http.post(`/v1/webhooks/${webhookId}/test`)).status).toBe(202);
    const req = await eventually(async () => receiver.requests[before]);
    expect(isSignedBy(secret, req.body, req.headers)).toBe(true);
  }

  it('the row holds v1:<keyId>:<iv>:<tag>:<ciphertext>, never the secret; deliveries are still signed with it', async () => {
    const hook = (await http.post('/v1/webhooks', { url: receiver.url, events: ['pet.created'] })).body;
    const row = await stored(hook.id);
    expect(row).toMatch(/^v1:k1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(row).not.toContain(hook.secret);
    expect(row).not.toContain(hook.secret.slice(6, 20));
    await expectSignedWith(hook.id, hook.secret);
  });

  it('a secret stored before encryption still signs, and the worker seals it on the way', async () => {
    const hook = (await http.post('/v1/webhooks', { url: receiver.url, events: ['pet.created'] })).body;
    await db.query('UPDATE webhooks SET secret = $1 WHERE id = $2', [hook.secret, hook.id]);
    await expectSignedWith(hook.id, hook.secret);
    expect(await stored(hook.id)).toMatch(/^v1:k1:/);
  });

  it('key rotation: the CLI reseals every row under the new first key; deliveries keep their signatures', async () => {
    const hook = (await http.post('/v1/webhooks', { url: receiver.url, events: ['pet.created'] })).body;
    const { stdout } = await cliWithEnv(ROTATED, 'webhook:reseal-secrets', '--json');
    expect(JSON.parse(stdout).resealed).toBeGreaterThanOrEqual(1);
    expect(await stored(hook.id)).toMatch(/^v1:k2:/);

    const rotatedWorker = await startWorker(ROTATED);
    await worker.close();
    worker = rotatedWorker;
    await expectSignedWith(hook.id, hook.secret);
  });

  describe('the box', () => {
    // Built per test, so the rest of the file runs (and fails) on code without the box.
    let box: WebhookSecretBox;
    beforeEach(() => (box = new WebhookSecretBox([OLD])));

    it('refuses a ciphertext that was altered', () => {
      const sealed = box.seal('whsec_abc', 7).split(':');
      sealed[4] = Buffer.from('whsec_abd').toString('base64');
      expect(() => box.open(sealed.join(':'), 7)).toThrow(SecretBoxError);
    });

    it("refuses a ciphertext copied to another account's row", () => {
      expect(() => box.open(box.seal('whsec_abc', 7), 8)).toThrow(SecretBoxError);
    });

    it('refuses a ciphertext under a key id it does not hold', () => {
      expect(() => new WebhookSecretBox([NEW]).open(box.seal('whsec_abc', 7), 7)).toThrow(/unknown key id k1/);
    });
  });

  describe('configuration', () => {
    it.each([
      ['a short key', `k1:${randomBytes(16).toString('base64')}`],
      ['no id', randomBytes(32).toString('base64')],
      ['a duplicate id', `${entry(OLD)},${entry({ id: 'k1', key: NEW.key })}`],
    ])('refuses %s, naming the variable without echoing the key', (_what, value) => {
      expect(() => loadConfig({ WEBHOOK_SECRET_KEYS: value })).toThrow(ConfigError);
      try {
        loadConfig({ WEBHOOK_SECRET_KEYS: value });
      } catch (err) {
        expect((err as Error).message).toContain('WEBHOOK_SECRET_KEYS');
        expect((err as Error).message).not.toContain(value.split(':').pop());
      }
    });

    it('production refuses to start without keys', () => {
      expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
        /WEBHOOK_SECRET_KEYS: required when NODE_ENV=production/,
      );
    });
  });
});
