import type { Response } from 'express';
import { entityTags, tagOfJson } from '@app/errors';

const READS = new Set(['GET', 'HEAD']);

/**
 * If-None-Match: weak comparison (RFC 9110 13.1.2). Evaluated here rather than by Express's
 * `fresh`, which ignores it when the request says `Cache-Control: no-cache`, as every fetch()
 * sending If-None-Match does: that directive is for caches, not for the origin.
 */
function noneMatchHits(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  return entityTags(header).some((t) => t === '*' || t.replace(/^W\//, '') === tag);
}

/**
 * For single-record reads and writes: sets `ETag` and returns the JSON text it was computed
 * from, which the handler answers with (serialised once); a read whose If-None-Match names
 * the tag gets 304 and no body. Express's own etag is disabled app-wide: only these answers
 * carry one. A call in the handler, not an interceptor (docs/internals/decisions.md).
 */
export function taggedJson(res: Response, representation: object): string | undefined {
  const json = JSON.stringify(representation);
  const tag = tagOfJson(json);
  res.setHeader('ETag', tag);
  if (READS.has(res.req.method) && noneMatchHits(res.req.headers['if-none-match'], tag)) {
    res.status(304);
    return undefined;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  return json;
}

/** OpenAPI description of the If-Match header on conditional writes. */
export const IF_MATCH_HEADER = {
  name: 'If-Match',
  required: false,
  description: 'Refuse the write (412 precondition_failed) unless this ETag is still current',
};

export const IF_NONE_MATCH_HEADER = {
  name: 'If-None-Match',
  required: false,
  description: 'Answer 304 without a body while this ETag is still current',
};
