import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '@app/errors';
import type { RouteTable } from './route-table';

/**
 * A known path asked with a method no route of it takes is answered 405 `method_not_allowed`
 * with `Allow` (RFC 9110 15.5.6), not 404: the path exists. Paths no route has stay 404.
 */
export function methodNotAllowed(routes: RouteTable) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const allowed = routes.allowedAt(req.path);
    if (!allowed || allowed.includes(req.method)) return next();
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
