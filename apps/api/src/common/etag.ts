import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { ApiError } from '@app/errors';

/** A strong entity tag: a hash of the JSON representation, which is what the client receives. */
export function entityTag(representation: object): string {
  return tagOfJson(JSON.stringify(representation));
}

function tagOfJson(json: string): string {
  return `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
}

const READS = new Set(['GET', 'HEAD']);

function tags(header: string): string[] {
  return header.split(',').map((t) => t.trim());
}

/** If-None-Match: weak comparison (RFC 9110 13.1.2). */
function noneMatchHits(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  return tags(header).some((t) => t === '*' || t.replace(/^W\//, '') === tag);
}

/**
 * If-Match on a write: strong comparison (RFC 9110 13.1.1); the caller checks the current
 * representation inside the transaction that holds the row lock, so "current" cannot move.
 */
export function assertIfMatch(header: string | undefined, current: object): void {
  if (!header) return;
  const tag = entityTag(current);
  if (!tags(header).some((t) => t === '*' || t === tag)) {
    throw new ApiError('precondition_failed', 'If-Match does not match the current ETag of the record');
  }
}

/**
 * For single-record reads and writes: sets `ETag`; a read whose If-None-Match names it gets
 * 304 without a body. (Express's own etag is disabled app-wide; only these answers carry one.)
 */
@Injectable()
export class ETagInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<string | undefined> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    return next.handle().pipe(
      map((body: object) => {
        const json = JSON.stringify(body);
        const tag = tagOfJson(json);
        res.setHeader('ETag', tag);
        if (READS.has(req.method) && noneMatchHits(req.headers['if-none-match'], tag)) {
          res.status(304);
          return undefined;
        }
        // Serialised once: the answer is the very text the tag was computed from.
        res.type('application/json');
        return json;
      }),
    );
  }
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
