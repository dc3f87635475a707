import { register } from 'prom-client';
import { Clock } from '@app/config';
import { ProxyTrustWatch } from './proxy-trust-watch';

class StoppedClock extends Clock {
  at = 1_000_000;
  override nowMs(): number {
    return this.at;
  }
}

const metric = async (name: string) => (await register.getSingleMetric(name)!.get()).values[0]?.value ?? 0;

/** A request as Fastify hands it over: `ip` as TRUST_PROXY resolved it, the socket's peer, the headers. */
const request = (ip: string, peer = ip, forwardedFor?: string) =>
  ({
    ip,
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as never;

describe('ProxyTrustWatch', () => {
  let clock: StoppedClock;
  let warnings: { fields: unknown; message: unknown }[];
  const onlyLoopback = (address: string) => address === '127.0.0.1';
  const watch = () =>
    new ProxyTrustWatch(onlyLoopback, clock, { warn: (fields, message) => warnings.push({ fields, message }) });

  beforeEach(() => {
    clock = new StoppedClock();
    warnings = [];
  });

  it('counts X-Forwarded-For from an untrusted peer and warns at most once a minute', async () => {
    const w = watch();
    const before = await metric('petstore_untrusted_forwarded_for_total');
    w.observe(request('10.0.0.9', '10.0.0.9', '203.0.113.1'));
    w.observe(request('10.0.0.9', '10.0.0.9', '203.0.113.2'));
    expect(await metric('petstore_untrusted_forwarded_for_total')).toBe(before + 2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].fields).toEqual({ peer: '10.0.0.9', requests: 1 });
    clock.at += 60_000;
    w.observe(request('10.0.0.9', '10.0.0.9', '203.0.113.3'));
    expect(warnings).toHaveLength(2);
    expect(warnings[1].fields).toEqual({ peer: '10.0.0.9', requests: 2 });
  });

  it('leaves X-Forwarded-For from a trusted peer, and requests without it, alone', async () => {
    const w = watch();
    const before = await metric('petstore_untrusted_forwarded_for_total');
    w.observe(request('203.0.113.1', '127.0.0.1', '203.0.113.1'));
    w.observe(request('10.0.0.9'));
    expect(await metric('petstore_untrusted_forwarded_for_total')).toBe(before);
    expect(warnings).toEqual([]);
  });

  it('warns and sets the gauge when one address sends over half of at least 1,000 requests in a minute', async () => {
    const w = watch();
    for (let i = 0; i < 600; i++) w.observe(request('192.0.2.1'));
    for (let i = 0; i < 400; i++) w.observe(request(`198.51.100.${i % 200}`));
    clock.at += 60_000;
    w.observe(request('192.0.2.1'));
    expect(await metric('petstore_client_address_top_share')).toBeCloseTo(0.6);
    expect(warnings).toEqual([
      {
        fields: { address: 'ip:192.0.2.1', requests: 1000, share: 0.6 },
        message: expect.stringContaining('TRUST_PROXY'),
      },
    ]);
  });

  it('says nothing of a busy address in a quiet minute or among many', async () => {
    const w = watch();
    for (let i = 0; i < 999; i++) w.observe(request('192.0.2.1'));
    clock.at += 60_000;
    w.observe(request('192.0.2.1'));
    expect(await metric('petstore_client_address_top_share')).toBe(0);
    // With the request that closed the last window: 500 of 1,000, half, not most.
    for (let i = 0; i < 999; i++) w.observe(request(i < 499 ? '192.0.2.1' : `198.51.100.${i % 200}`));
    clock.at += 60_000;
    w.observe(request('192.0.2.1'));
    expect(await metric('petstore_client_address_top_share')).toBeCloseTo(0.5);
    expect(warnings).toEqual([]);
  });
});
