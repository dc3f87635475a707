import { isPrivateAddress } from '@app/webhooks';

/**
 * The SSRF guard refuses NAT64 local-use, Teredo and 6to4 addresses: each can carry or relay to
 * an internal IPv4 host.
 */
describe('webhook targets in IPv6 transition ranges', () => {
  it.each([
    ['NAT64 local-use (RFC 8215)', '64:ff9b:1::a00:1'],
    ['NAT64 local-use with a public embedded address', '64:ff9b:1::808:808'],
    ['Teredo (RFC 4380)', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['Teredo, compressed', '2001::1'],
    ['6to4 over a public IPv4 relay', '2002:808:808::1'],
    ['6to4 over a private IPv4 host', '2002:a00:1::1'],
    ['NAT64 well-known prefix embedding a private host', '64:ff9b::a00:1'],
    ['IPv4-mapped loopback, hex form', '::ffff:7f00:1'],
    ['benchmarking (RFC 5180)', '2001:2::1'],
    ['ORCHIDv2 (RFC 7343)', '2001:20::1'],
  ])('refuses %s (%s)', (_what, ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each(['2606:4700::1111', '2a00:1450:4001:80b::200e', '64:ff9b::808:808'])('still accepts public %s', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });
});
