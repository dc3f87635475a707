import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '@app/errors';

// Postgres text cannot hold U+0000: refused up front (400) rather than failing in SQL (500).
const NUL_IN_STRING = 'string contains U+0000';

const isJson = (contentType: string | undefined): boolean => {
  if (contentType === 'application/json') return true;
  const semicolon = contentType?.indexOf(';') ?? -1;
  const essence = semicolon === -1 ? contentType : contentType!.slice(0, semicolon);
  return essence?.trim().toLowerCase() === 'application/json';
};

/**
 * What the gate refuses before any body is read: a NUL in the URL, a body that is not JSON. The interface asks for
 * 400, not 415; a bodiless request passes whatever its headers, whatever its method.
 */
export function refusedIntake(req: FastifyRequest): ApiError | undefined {
  if (req.url.includes('%00')) {
    return new ApiError('invalid_parameter', 'Parameters must not contain the NUL character (%00)');
  }
  const headers = req.headers;
  const hasBody =
    (headers['content-length'] !== undefined && headers['content-length'] !== '0') ||
    headers['transfer-encoding'] !== undefined;
  if (hasBody && !isJson(headers['content-type'])) {
    return new ApiError('unsupported_media_type', 'Send the body with Content-Type: application/json');
  }
  return undefined;
}

const invalidJson = () => new ApiError('invalid_json', 'The request body is not valid JSON');

// As body-parser's `strict`: an object or an array, never a bare string or number.
const OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;

/** JSON is the one body the API reads: an object or array, strings without NUL; an empty body is none. */
export function acceptJsonBodies(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
    if (text === '') return done(null, undefined);
    if (!OBJECT_OR_ARRAY.test(text as string)) return done(invalidJson(), undefined);
    try {
      done(null, JSON.parse(text as string, rejectNul));
    } catch (err) {
      const message = (err as Error).message;
      if (!message.startsWith(NUL_IN_STRING)) return done(invalidJson(), undefined);
      const field = message.slice(NUL_IN_STRING.length + 2) || 'body';
      done(
        new ApiError('validation_failed', 'Strings must not contain the NUL character (\\u0000)', [
          { field, message: 'must not contain the NUL character' },
        ]),
        undefined,
      );
    }
  });
}

function rejectNul(key: string, value: unknown): unknown {
  if (typeof value === 'string' && value.includes('\0')) throw new Error(`${NUL_IN_STRING}: ${key}`);
  return value;
}
