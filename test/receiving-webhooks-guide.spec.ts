import express from 'express';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import * as sdk from '@petstore/client';
import { generateWebhookSecret, standardWebhookHeaders } from '@app/webhooks';
import { transpileDocCode } from './support/doc-code';
import { describeWithPython, verifyWithGuidePython } from './support/guide-python';

/** The Node receiver of docs/receiving-webhooks.md, run as written: the guide's code works. */
const guide = readFileSync(join(__dirname, '..', 'docs', 'receiving-webhooks.md'), 'utf8');
const code = /^## Node[\s\S]*?```ts\n([\s\S]*?)```/m.exec(guide)![1];

interface Receiver {
  handled: Map<string, unknown>;
  server: Server;
}

describe('the receiving-webhooks guide (Node)', () => {
  const secret = generateWebhookSecret();
  let receiver: Receiver;
  let url: string;

  beforeAll(async () => {
    const js = transpileDocCode(code);
    const exports = {} as Receiver;
    const modules: Record<string, unknown> = { express, '@petstore/client': sdk };
    const requireFor = (name: string) => modules[name];
    const env = { ...process.env, PETSTORE_WEBHOOK_SECRET: secret, PORT: '0' };
    new Function('require', 'exports', 'process', js)(requireFor, exports, { ...process, env });
    receiver = exports;
    await new Promise((resolve) => receiver.server.once('listening', resolve));
    url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/petstore/webhooks`;
  });
  afterAll(() => new Promise((resolve) => receiver?.server.close(resolve)));

  const post = (body: string, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });
  const body = JSON.stringify({ id: 7, type: 'pet.created', resourceType: 'pet', resourceId: '3', data: {} });

  it('acknowledges a delivery signed by the service, and handles a retry of it once', async () => {
    const headers = standardWebhookHeaders([secret], '7', body);
    expect((await post(body, headers)).status).toBe(204);
    expect((await post(body, headers)).status).toBe(204);
    expect([...receiver.handled]).toEqual([['7', JSON.parse(body)]]);
  });

  it('acknowledges a delivery signed by the standardwebhooks package', async () => {
    const now = new Date();
    const signature = new Webhook(secret).sign('8', now, body);
    const headers = { 'webhook-id': '8', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)) };
    expect((await post(body, { ...headers, 'webhook-signature': signature })).status).toBe(204);
    expect(receiver.handled.has('8')).toBe(true);
  });

  it('refuses a tampered body or another secret with 400 and the reason', async () => {
    const tampered = await post(body.replace('3', '4'), standardWebhookHeaders([secret], '9', body));
    expect([tampered.status, await tampered.text()]).toEqual([400, 'mismatch']);
    const other = await post(body, standardWebhookHeaders([generateWebhookSecret()], '9', body));
    expect(other.status).toBe(400);
    expect((await post(body, {})).status).toBe(400);
    expect(receiver.handled.has('9')).toBe(false);
  });
});

/** The guide's standard-library Python verifier, run as written by python3 on deliveries signed as the service signs them. */
describeWithPython('the receiving-webhooks guide (Python, standard library only)', () => {
  const secret = generateWebhookSecret();
  const body = JSON.stringify({ id: 12, type: 'order.placed', resourceType: 'order', resourceId: '5', data: { é: 1 } });
  const signed = (secrets: string[], at = new Date(), payload = body) =>
    standardWebhookHeaders(secrets, '12', payload, at);

  it('returns the event of a delivery signed with the secret', () => {
    expect(verifyWithGuidePython([{ secret, headers: signed([secret]), body }])).toEqual([{ event: JSON.parse(body) }]);
  });

  it('accepts either secret during a rotation (two signatures)', () => {
    const next = generateWebhookSecret();
    const headers = signed([next, secret]);
    expect(verifyWithGuidePython([next, secret].map((s) => ({ secret: s, headers, body })))).toEqual([
      { event: JSON.parse(body) },
      { event: JSON.parse(body) },
    ]);
  });

  it('accepts a secret made before Standard Webhooks (base64url without padding)', () => {
    const legacy = `whsec_${randomBytes(32).toString('base64url')}`;
    expect(verifyWithGuidePython([{ secret: legacy, headers: signed([legacy]), body }])).toEqual([
      { event: JSON.parse(body) },
    ]);
  });

  it('refuses a tampered body, another secret, a stale timestamp and missing headers, saying why', () => {
    const stale = new Date(Date.now() - 10 * 60_000);
    expect(
      verifyWithGuidePython([
        { secret, headers: signed([secret]), body: body.replace('5', '6') },
        { secret: generateWebhookSecret(), headers: signed([secret]), body },
        { secret, headers: signed([secret], stale), body },
        { secret, headers: {}, body },
      ]),
    ).toEqual([
      { error: 'no matching signature' },
      { error: 'no matching signature' },
      { error: 'timestamp too far from now' },
      { error: "missing header 'webhook-id'" },
    ]);
  });
});
