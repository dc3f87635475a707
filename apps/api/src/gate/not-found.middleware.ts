import { NotFoundException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

// Nest answers misses under its global prefix and on the unprefixed routes' paths; any other path no
// mount served would get Express's HTML 404. Matched as Express routes: any case, a trailing slash allowed.
export function notFoundOutside(prefix: string, routes: readonly string[]) {
  const prefixed = `/${prefix}`.toLowerCase();
  const unprefixed = new Set(routes.map((path) => path.toLowerCase()));
  return (req: Request, _res: Response, next: NextFunction): void => {
    const lower = req.path.toLowerCase();
    const path = lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
    if (path === prefixed || path.startsWith(`${prefixed}/`) || unprefixed.has(path)) return next();
    next(new NotFoundException());
  };
}
