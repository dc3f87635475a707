import { HttpClient } from '../support/http';
import { RunningApi, startApi } from '../support/test-apps';

/**
 * TRUST_PROXY as a list of the proxies' addresses and CIDRs: X-Forwarded-For counts only from a
 * peer in the list (the tests connect from 127.0.0.1), and is otherwise ignored and counted.
 */
async function used(api: RunningApi, forwardedFor: string): Promise<number> {
  const res = await fetch(`${api.url}/v1/pets`, { headers: { 'X-Forwarded-For': forwardedFor } });
  expect(res.status).toBe(401);
  await res.text();
  return Number(res.headers.get('x-ratelimit-used'));
}

async function untrustedCount(api: RunningApi): Promise<number> {
  const text = (await new HttpClient(api.metricsUrl).get('/metrics')).text;
  return Number(/^petstore_untrusted_forwarded_for_total (\d+)$/m.exec(text)?.[1]);
}

const address = () => `198.51.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

describe('TRUST_PROXY as a list of CIDRs', () => {
  let api: RunningApi;
  afterEach(() => api?.close());

  it('takes the client address from X-Forwarded-For when the peer is in the list', async () => {
    api = await startApi({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1/32' });
    const before = await untrustedCount(api);
    // Each forwarded address is its own client with its own anonymous budget.
    expect(await used(api, address())).toBe(1);
    expect(await used(api, address())).toBe(1);
    expect(await untrustedCount(api)).toBe(before);
  });

  it('ignores X-Forwarded-For from a peer outside the list, and counts it', async () => {
    api = await startApi({ TRUST_PROXY: '10.0.0.0/8' });
    const before = await untrustedCount(api);
    // Both are the peer, 127.0.0.1, whatever they claim: one budget.
    const first = await used(api, address());
    expect(await used(api, address())).toBe(first + 1);
    expect(await untrustedCount(api)).toBe(before + 2);
  });
});
