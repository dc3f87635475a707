import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';

interface Representation {
  body: Buffer;
  etag: string;
  encoding?: 'gzip';
}

// A client that omits Accept-Encoding gets the plain bytes.
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.split(';');
    if (coding.trim().toLowerCase() !== 'gzip') continue;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

// Weak comparison (RFC 9110 13.1.2): `W/"x"` matches `"x"`.
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

// Gzipped once at boot; the gzip representation's ETag has a suffix, as its bytes differ.
export function serveDocument(serialised: string): (req: Request, res: Response, next: NextFunction) => void {
  const json = Buffer.from(serialised);
  const hash = createHash('sha256').update(json).digest('base64url');
  const plain: Representation = { body: json, etag: `"${hash}"` };
  const gzipped: Representation = { body: gzipSync(json, { level: 9 }), etag: `"${hash}-gzip"`, encoding: 'gzip' };
  return (req, res, next) => {
    // Its own path only (the mount strips it), read only: the rest is a miss.
    if (req.path !== '/' || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    const chosen = acceptsGzip(req.headers['accept-encoding']) ? gzipped : plain;
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('Vary', 'Accept-Encoding');
    res.setHeader('ETag', chosen.etag);
    if (matches(req.headers['if-none-match'], chosen.etag)) {
      res.status(304).end();
      return;
    }
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    if (chosen.encoding) res.setHeader('Content-Encoding', chosen.encoding);
    res.setHeader('Content-Length', chosen.body.length);
    res.status(200).end(req.method === 'HEAD' ? undefined : chosen.body);
  };
}
