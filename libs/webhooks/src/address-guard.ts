import { lookup } from 'node:dns/promises';
import { BlockList, isIP, isIPv4 } from 'node:net';

/** IPv4 ranges a webhook may not target: this host, private networks, link-local, shared, reserved. */
const BLOCKED_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", including the unspecified 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
];

const BLOCKED_V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
for (const [net, prefix] of BLOCKED_V4) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of BLOCKED_V6) blocked.addSubnet(net, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address (accepts '::' and a trailing dotted quad). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad[1].split('.').map(Number);
    text = text.slice(0, -quad[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const words = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return words.flatMap((w) => {
    const n = parseInt(w, 16);
    return [n >> 8, n & 0xff];
  });
}

/**
 * The IPv4 address an IPv6 address stands for, if it embeds one a router would reach:
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIPv4(address: string): string | undefined {
  const b = ipv6Bytes(address);
  const v4 = (at: number) => b.slice(at, at + 4).join('.');
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (zeros(0, 12) && !zeros(12, 14)) return v4(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return undefined;
}

/** True when the address is not a public unicast address (loopback, private, link-local, multicast...). */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  const family = isIP(ip);
  if (family === 0) return true; // not an address at all: refuse rather than guess
  if (isIPv4(ip)) return blocked.check(ip, 'ipv4');
  if (blocked.check(ip, 'ipv6')) return true;
  const v4 = embeddedIPv4(ip);
  return v4 !== undefined && blocked.check(v4, 'ipv4');
}

export class UnsafeWebhookUrl extends Error {}

export interface ResolvedTarget {
  url: URL;
  /** The checked addresses, to connect to (so a DNS change after the check cannot redirect us). */
  addresses: { address: string; family: 4 | 6 }[];
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Checks a webhook URL and resolves its host: http or https only, no credentials, and (unless
 * private targets are allowed) every address the host resolves to must be public. Run when a
 * webhook is created AND before each delivery, since DNS answers can change in between.
 * Throws UnsafeWebhookUrl with a message fit for the API user.
 */
export async function resolveWebhookTarget(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
  /** At creation a host that does not resolve (yet) is accepted: deliveries re-check and retry. */
  unresolvable: 'refuse' | 'accept' = 'refuse',
): Promise<ResolvedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeWebhookUrl('must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeWebhookUrl('must use http or https');
  if (url.username || url.password) throw new UnsafeWebhookUrl('must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await resolve(host);
    } catch {
      addresses = [];
    }
    if (!addresses.length && unresolvable === 'refuse') throw new UnsafeWebhookUrl('host name does not resolve');
  }
  if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) {
    throw new UnsafeWebhookUrl('must not target a private, loopback, link-local or reserved address');
  }
  return { url, addresses: addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })) };
}
