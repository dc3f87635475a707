import { NotFoundException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { sameIgnoringCase } from '../policy/route-table';

// Nest answers misses under its global prefix and on the unprefixed routes' paths, `notFound` behind the mounts
// those below them; any other path would get Express's HTML 404. A step of the gate's layer, so every request is
// dispatched past the mounts' layers rather than through one more of its own. Matched as Express routes: any case,
// a trailing slash allowed, a mount with what lies below it.
export function notFoundOutside(prefix: string, routes: readonly string[], mounts: readonly string[]) {
  const below = [`/${prefix}`, ...mounts].map((path) => path.toLowerCase());
  const unprefixed = new Set(routes.map((path) => path.toLowerCase()));
  return (req: Request, _res: Response, next: NextFunction): void => {
    const path = req.path;
    for (let i = 0; i < below.length; i++) if (isBelow(path, below[i])) return next();
    const lower = path.toLowerCase();
    if (unprefixed.has(lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower)) return next();
    next(new NotFoundException());
  };
}

/** The mounts outside the prefix (Nest answers below it), where `notFound` goes after them. */
export function mountsOutside(prefix: string, mounts: readonly string[]): string[] {
  return mounts.filter((mount) => !isBelow(mount, `/${prefix}`.toLowerCase()));
}

/** What the mounts did not serve. */
export function notFound(_req: Request, _res: Response, next: NextFunction): void {
  next(new NotFoundException());
}

// `base` lowercase; no copy of `path`, which every request passes through.
function isBelow(path: string, base: string): boolean {
  if (path.length > base.length && path.charCodeAt(base.length) !== 0x2f) return false;
  return path.length >= base.length && sameIgnoringCase(base, path, 0);
}
