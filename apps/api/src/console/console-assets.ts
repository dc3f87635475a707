import express, { NextFunction, Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

// The page may hold a pasted API key. uPlot and Preact set styles through the DOM, never inline
// attributes, so no 'unsafe-inline' is needed.
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Found upwards from this file (image and tests alike); undefined when the console was not built. */
export function consoleDirectory(from = __dirname): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'dist', 'console');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

// The page is revalidated, never cached stale. Its Referrer-Policy (no-referrer) is helmet's on every answer: set here
// too, it would be a second line after helmet's block
// (docs/internals/decisions/0050-header-block.md).
export function consoleAssets(directory: string | undefined): express.Handler {
  const assets = directory ? express.static(directory, { index: 'index.html', redirect: true, maxAge: 0 }) : undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    if (!assets || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    assets(req, res, next);
  };
}
