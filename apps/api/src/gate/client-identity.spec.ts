import { addressBucket } from './client-identity';

describe('addressBucket', () => {
  it.each([
    ['an IPv4 address', '203.0.113.7', 'ip:203.0.113.7'],
    ['an IPv4-mapped IPv6 address, as its IPv4 address', '::ffff:203.0.113.7', 'ip:203.0.113.7'],
    ['an IPv4-mapped address in upper case', '::FFFF:127.0.0.1', 'ip:127.0.0.1'],
    ['an IPv4-mapped address in hex form', '::ffff:cb00:7107', 'ip:203.0.113.7'],
    ['an IPv6 address, as its /64', '2001:db8:1:2:3:4:5:6', 'ip:2001:db8:1:2::/64'],
    [
      'a mapped-looking address whose quad is out of range, as the parser reads it',
      '::ffff:300.0.0.1',
      'ip:::ffff:300.0.0.1',
    ],
    ['no address', undefined, 'ip:unknown'],
  ])('buckets %s', (_what, ip, bucket) => {
    expect(addressBucket(ip)).toBe(bucket);
  });
});
