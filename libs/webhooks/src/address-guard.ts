import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// ipaddr.js's name for the rest of the address space: every special range it knows is refused, NAT64 local-use,
// Teredo and 6to4 too (their IPv4 hosts cannot be checked reliably). The table is the library's, kept up with IANA.
const PUBLIC_RANGE = 'unicast';
/** RFC 6052's well-known NAT64 prefix: a DNS64 resolver puts public IPv4 hosts there, so the embedded address decides. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** Deprecated IPv4-compatible addresses (::a.b.c.d), which ipaddr.js counts as unicast. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

export function isPrivateAddress(address: string): boolean {
  const text = address.replace(/^\[|\]$/g, '');
  if (!isIP(text)) return true; // not an address at all: refuse rather than guess
  // process() turns an IPv4-mapped IPv6 address into its IPv4 address, so both spellings meet the IPv4 table.
  const ip = ipaddr.process(text);
  if (ip.kind() === 'ipv4') return ip.range() !== PUBLIC_RANGE;
  const v6 = ip as ipaddr.IPv6;
  if (v6.match(NAT64_WELL_KNOWN) || v6.match(IPV4_COMPATIBLE)) {
    const embedded = new ipaddr.IPv4(v6.toByteArray().slice(12));
    return embedded.range() !== PUBLIC_RANGE;
  }
  return v6.range() !== PUBLIC_RANGE;
}

export class UnsafeWebhookUrl extends Error {}

export interface ResolvedTarget {
  url: URL;
  /** To connect to, so a DNS change after the check cannot redirect us. */
  addresses: { address: string; family: 4 | 6 }[];
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** RFC 6761: `localhost` and names under it are loopback by definition, whatever a resolver says. */
const LOOPBACK_NAME = /(^|\.)localhost\.?$/i;

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

export const PRIVATE_TARGET = 'must not target a private, loopback, link-local or reserved address';

/** What the 400 for such a URL adds: the two ways a newcomer on localhost gets events. */
export const PRIVATE_TARGET_HINT =
  'To receive events on your own machine while developing, run `npx petstore listen --base-url <this API> ' +
  '--forward-to <your local URL>` (no webhook needed); the operator of a self-hosted service may allow such URLs ' +
  'with the setting ALLOW_PRIVATE_WEBHOOK_URLS=true (trusted networks only)';

// At creation and on a URL change: no DNS lookup, so the answer is the same for every host name (one that resolves to
// a private address, or not at all, is refused at delivery). Only what the URL itself says is judged here.
export function checkWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeWebhookUrl('must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeWebhookUrl('must use http or https');
  if (url.username || url.password) throw new UnsafeWebhookUrl('must not carry credentials');
  const host = hostOf(url);
  const privateAsWritten = isIP(host) ? isPrivateAddress(host) : LOOPBACK_NAME.test(host);
  if (!allowPrivate && privateAsWritten) throw new UnsafeWebhookUrl(PRIVATE_TARGET);
  return url;
}

// Before each batch of deliveries, since DNS answers change: every address the host resolves to must be public. Throws
// UnsafeWebhookUrl with a message fit for the API user.
export async function resolveWebhookTarget(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<ResolvedTarget> {
  const url = checkWebhookUrl(raw, allowPrivate);
  const host = hostOf(url);
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await resolve(host);
    } catch {
      addresses = [];
    }
    if (!addresses.length) throw new UnsafeWebhookUrl('host name does not resolve');
  }
  if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) throw new UnsafeWebhookUrl(PRIVATE_TARGET);
  return { url, addresses: addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })) };
}
