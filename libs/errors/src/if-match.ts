import { hash } from 'node:crypto';
import { ApiError } from './api-error';

/** Strong: a hash of the JSON representation the client receives. */
export function entityTag(representation: object): string {
  return tagOfJson(JSON.stringify(representation));
}

// One-shot: no Hash object per request for the GC to finalise.
export function tagOfJson(json: string): string {
  return `"${hash('sha256', json, 'base64url').slice(0, 27)}"`;
}

export function entityTags(header: string): string[] {
  return header.split(',').map((t) => t.trim());
}

// Strong comparison (RFC 9110 13.1.1); the caller checks inside the transaction holding the row
// lock, so "current" cannot move. Only an absent header is no condition: an empty or blank one is a
// list of no tags, which matches nothing (412).
export function assertIfMatch(header: string | undefined, current: object): void {
  if (header === undefined) return;
  const tag = entityTag(current);
  if (!entityTags(header).some((t) => t === '*' || t === tag)) {
    throw new ApiError('precondition_failed', 'If-Match does not match the current ETag of the record');
  }
}
