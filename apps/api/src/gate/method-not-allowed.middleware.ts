import type { NextFunction, Request, Response } from 'express';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ApiError } from '@app/errors';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface DocumentedPath {
  pattern: RegExp;
  methods: string[];
}

/**
 * A documented path asked with a method the document does not list is answered 405
 * `method_not_allowed` with `Allow` (RFC 9110 15.5.6), not 404: the path exists. Paths the
 * document does not name stay 404. The table comes from the served document, so a new
 * operation is allowed as soon as it is documented.
 */
export function methodNotAllowed(document: OpenAPIObject) {
  const prefix = new URL(document.servers?.[0]?.url ?? '/', 'http://x').pathname.replace(/\/$/, '');
  const paths: DocumentedPath[] = Object.entries(document.paths).map(([template, item]) => ({
    pattern: new RegExp(
      `^${prefix}${template
        .split(/\{[^}]+\}/)
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]+')}$`,
    ),
    methods: METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((m) => m.toUpperCase()),
  }));
  return (req: Request, _res: Response, next: NextFunction): void => {
    const matching = paths.filter((p) => p.pattern.test(req.path));
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    if (!matching.length || matching.some((p) => p.methods.includes(method))) return next();
    const allowed = [...new Set(matching.flatMap((p) => p.methods))];
    if (allowed.includes('GET')) allowed.push('HEAD');
    next(
      new ApiError(
        'method_not_allowed',
        `${req.method} is not allowed here; allowed: ${allowed.join(', ')}`,
        undefined,
        {
          Allow: allowed.join(', '),
        },
      ),
    );
  };
}
