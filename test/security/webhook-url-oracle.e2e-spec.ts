import { INestApplicationContext } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isPrivateAddress } from '@app/webhooks';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../support/test-apps';
import { eventually, HttpClient } from '../support/http';
import { WebhookReceiver } from '@app/testing';

/**
 * Issue 43: with private URLs refused, creation answered 400 for a host name the server resolves to a private
 * address and 201 for one that does not resolve: a probe of the server's /etc/hosts and internal DNS. Creation and
 * PATCH now answer alike for every host name; the address is checked at each delivery.
 */
const ENV = { ALLOW_PRIVATE_WEBHOOK_URLS: 'false' };

/** A name this machine's /etc/hosts maps to a private address, not `localhost` (refused as written). */
function privateNameFromHostsFile(): string {
  for (const line of readFileSync('/etc/hosts', 'utf8').split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!isIP(address ?? '') || !isPrivateAddress(address)) continue;
    const name = names.find((n) => n && !/(^|\.)localhost$/i.test(n) && !isIP(n));
    if (name) return name;
  }
  throw new Error('/etc/hosts names no private address but localhost: this test needs one');
}

describe('webhook URLs answer the same whatever their host resolves to', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  let receiver: WebhookReceiver;
  let http: HttpClient;
  const internal = privateNameFromHostsFile();

  beforeAll(async () => {
    [api, worker, receiver] = await Promise.all([startApi(ENV), startWorker(ENV), new WebhookReceiver().start()]);
    http = new HttpClient(api.url, (await createAccount(api)).apiKey);
  });
  afterAll(() => closeAll([() => receiver?.close(), () => worker?.close(), () => api?.close()]));

  /** Status and body of an answer, without what differs between any two webhooks. */
  const shape = (res: { status: number; body: Record<string, unknown> }) => {
    const rest = Object.entries(res.body).filter(([k]) => !['id', 'url', 'secret', 'createdAt'].includes(k));
    return { status: res.status, ...Object.fromEntries(rest) };
  };

  it('creates a webhook to a name resolving to a private address as one to a name that does not resolve', async () => {
    const events = ['pet.created'];
    const privateName = await http.post('/v1/webhooks', { url: `http://${internal}/hook`, events });
    const unresolvable = await http.post('/v1/webhooks', { url: 'http://hook.invalid/hook', events });
    const publicIp = await http.post('/v1/webhooks', { url: 'http://93.184.215.14/hook', events });
    expect(shape(privateName)).toEqual(shape(unresolvable));
    expect(shape(privateName)).toEqual(shape(publicIp));
    expect(privateName.status).toBe(201);
  });

  it('changes a URL to a name resolving to a private address as to one that does not resolve', async () => {
    const { body: hook } = await http.post('/v1/webhooks', {
      url: 'http://93.184.215.14/hook',
      events: ['pet.created'],
    });
    const privateName = await http.patch(`/v1/webhooks/${hook.id}`, { url: `http://${internal}/moved` });
    const unresolvable = await http.patch(`/v1/webhooks/${hook.id}`, { url: 'http://hook.invalid/moved' });
    expect(shape(privateName)).toEqual(shape(unresolvable));
    expect(privateName.status).toBe(200);
  });

  it('still refuses a private address at delivery, for a name as for the address', async () => {
    const port = new URL(receiver.url).port;
    const { body: hook } = await http.post('/v1/webhooks', {
      url: `http://${internal}:${port}/hook`,
      events: ['pet.created'],
    });
    const test = await http.post(`/v1/webhooks/${hook.id}/test`);
    const failed = await eventually(async () => {
      const list = await http.get(`/v1/webhooks/${hook.id}/deliveries`);
      return list.body.find((d: { id: number; status: string }) => d.id === test.body.id && d.status === 'failed');
    });
    expect(failed.lastError).toBe('url refused: must not target a private, loopback, link-local or reserved address');
    expect(receiver.requests).toEqual([]);
  });

  it.each(['http://localhost/hook', 'http://api.localhost/hook', 'http://127.0.0.1/hook', 'http://[::1]/hook'])(
    'still refuses %s as written, which reveals nothing',
    async (url) => {
      const res = await http.post('/v1/webhooks', { url, events: ['pet.created'] });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([
        { field: 'url', message: 'must not target a private, loopback, link-local or reserved address' },
      ]);
    },
  );
});
