import ipaddr from 'ipaddr.js';
import { ApiError } from '@app/errors';

/**
 * The anonymous budget's key for a client address. An IPv6 client usually holds a whole /64
 * (one subnet per home or VM), so a budget per /128 would give it 2^64 budgets: the /64 is the
 * unit. IPv4 stays per address; an IPv4-mapped IPv6 address (::ffff:a.b.c.d, what a dual-stack
 * socket reports) counts as its IPv4 address.
 */
export function addressBucket(ip: string | undefined): string {
  if (!ip) return 'ip:unknown';
  if (!ip.includes(':')) return `ip:${ip}`; // IPv4, the common case, without parsing
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(ip);
  } catch {
    return `ip:${ip}`;
  }
  if (parsed.kind() === 'ipv4') return `ip:${parsed.toString()}`;
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `ip:${prefix.join(':')}::/64`;
}

/**
 * Node keeps only the first of two Authorization headers (req.headers), which would let a proxy
 * and the service disagree on who is calling; RFC 9110 allows one. Counted on rawHeaders, which
 * costs a loop over the header names rather than req.headersDistinct's copy of all of them.
 */
export function hasDuplicateAuthorization(rawHeaders: string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 13 && name.toLowerCase() === 'authorization' && ++seen > 1) return true;
  }
  return false;
}

export const duplicateAuthorization = () =>
  new ApiError('malformed_request', 'Send exactly one Authorization header', [
    { field: 'Authorization', message: 'must be sent once' },
  ]);
