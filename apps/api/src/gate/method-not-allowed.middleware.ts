import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '@app/errors';
import type { RouteTable } from '../policy/route-table';

// RFC 9110 15.5.6: 405 with `Allow`, not 404, for a known path; paths no route has stay 404.
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
