import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

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
export function documentRoute(serialised: string): (req: FastifyRequest, reply: FastifyReply) => void {
  const json = Buffer.from(serialised);
  const hash = createHash('sha256').update(json).digest('base64url');
  const plain: Representation = { body: json, etag: `"${hash}"` };
  const gzipped: Representation = { body: gzipSync(json, { level: 9 }), etag: `"${hash}-gzip"`, encoding: 'gzip' };
  return (req, reply) => {
    const chosen = acceptsGzip(req.headers['accept-encoding']) ? gzipped : plain;
    reply.header('Cache-Control', 'public, max-age=300');
    reply.header('Vary', 'Accept-Encoding');
    reply.header('ETag', chosen.etag);
    if (matches(req.headers['if-none-match'], chosen.etag)) {
      void reply.code(304).send();
      return;
    }
    reply.header('Content-Type', 'application/json; charset=utf-8');
    if (chosen.encoding) reply.header('Content-Encoding', chosen.encoding);
    void reply.code(200).send(chosen.body);
  };
}
