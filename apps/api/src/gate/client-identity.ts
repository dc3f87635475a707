import ipaddr from 'ipaddr.js';
import { ApiError } from '@app/errors';

const IPV4_MAPPED = /^::ffff:(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/i;

// An IPv6 client usually holds a whole /64, so the /64 is the unit (else 2^64 budgets). An
// IPv4-mapped address (what a dual-stack socket reports) counts as its IPv4 address.
export function addressBucket(ip: string | undefined): string {
  if (!ip) return 'ip:unknown';
  if (!ip.includes(':')) return `ip:${ip}`; // IPv4, the common case, without parsing
  if (IPV4_MAPPED.test(ip)) return `ip:${ip.slice(7)}`; // what a dual-stack socket reports for IPv4 peers
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

// Node keeps only the first of two Authorization headers, so a proxy and the service could disagree
// on the caller. Counted on rawHeaders: cheaper than req.headersDistinct's copy of all of them.
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
