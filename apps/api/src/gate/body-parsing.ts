import express, { NextFunction, Request, Response } from 'express';
import { ApiError } from '@app/errors';

// The interface asks for 400, not 415. Bodiless requests pass whatever their headers.
export function requireJsonContentType(req: Request, _res: Response, next: NextFunction): void {
  const hasBody =
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') ||
    req.headers['transfer-encoding'] !== undefined;
  // The usual header needs no parsing by type-is (which splits it into new strings).
  if (hasBody && req.headers['content-type'] !== 'application/json' && !req.is('application/json')) {
    next(new ApiError('unsupported_media_type', 'Send the body with Content-Type: application/json'));
    return;
  }
  next();
}

// Postgres text cannot hold U+0000: refused up front (400) rather than failing in SQL (500).
const NUL_IN_STRING = 'string contains U+0000';

export function rejectNulInUrl(req: Request, _res: Response, next: NextFunction): void {
  if (/%00/.test(req.originalUrl)) {
    next(new ApiError('invalid_parameter', 'Parameters must not contain the NUL character (%00)'));
    return;
  }
  next();
}

export function jsonBody(limitBytes: number) {
  const parse = express.json({
    limit: limitBytes,
    strict: true,
    type: 'application/json',
    reviver: (key: string, value: unknown) => {
      if (typeof value === 'string' && value.includes('\0')) throw new Error(`${NUL_IN_STRING}: ${key}`);
      return value;
    },
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    parse(req, res, (err?: { type?: string; message?: string }) => {
      if (!err) return next();
      if (err.type === 'entity.parse.failed' && err.message?.startsWith(NUL_IN_STRING)) {
        const field = err.message.slice(NUL_IN_STRING.length + 2) || 'body';
        return next(
          new ApiError('validation_failed', 'Strings must not contain the NUL character (\\u0000)', [
            { field, message: 'must not contain the NUL character' },
          ]),
        );
      }
      if (err.type === 'entity.too.large') {
        return next(new ApiError('payload_too_large', `The request body exceeds ${limitBytes} bytes`));
      }
      if (err.type === 'entity.parse.failed')
        return next(new ApiError('invalid_json', 'The request body is not valid JSON'));
      return next(new ApiError('invalid_json', 'The request body could not be read'));
    });
  };
}
