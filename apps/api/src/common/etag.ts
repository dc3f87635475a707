import type { FastifyReply } from 'fastify';
import { entityTags, tagOfJson } from '@app/errors';

const READS = new Set(['GET', 'HEAD']);

// If-None-Match is answered even under `Cache-Control: no-cache`, which every fetch() sending it carries (Express's
// `fresh` ignored it there): that directive is for caches, not the origin.
function noneMatchHits(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  return entityTags(header).some((t) => t === '*' || t.replace(/^W\//, '') === tag);
}

// Returns the JSON the tag was computed from (serialised once), or undefined for a 304. A call in
// the handler, not an interceptor (docs/internals/decisions/0008-etag-and-idempotency-in-the-handler.md).
export function taggedJson(res: FastifyReply, representation: object): string | undefined {
  const json = JSON.stringify(representation);
  const tag = tagOfJson(json);
  res.header('ETag', tag);
  if (READS.has(res.request.method) && noneMatchHits(res.request.headers['if-none-match'], tag)) {
    res.status(304);
    return undefined;
  }
  res.header('Content-Type', 'application/json; charset=utf-8');
  return json;
}

export const IF_MATCH_HEADER = {
  name: 'If-Match',
  required: false,
  description:
    'Refuse the write (412 precondition_failed) unless this ETag (or one of a comma-separated list, or `*`) is still ' +
    'current. Strong comparison: a weak tag (`W/"…"`) never matches. An empty or blank If-Match is a list of no tags and ' +
    'matches nothing (412), as RFC 9110 13.1.1 says; leave the header out to write unconditionally',
};

export const IF_NONE_MATCH_HEADER = {
  name: 'If-None-Match',
  required: false,
  description: 'Answer 304 without a body while this ETag is still current',
};
