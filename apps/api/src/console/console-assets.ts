import express, { NextFunction, Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The console's page may hold a pasted API key: only its own script and stylesheet run, it
 * talks to this origin only, and nothing can frame it. uPlot and Preact set styles through the
 * DOM (allowed), never inline attributes, so no 'unsafe-inline' is needed.
 */
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

/**
 * dist/console (scripts/build-console.mjs), found upwards from this file: dist/apps/api/main.js
 * in the image, apps/api/src/console in the tests. Undefined when the console was not built.
 */
export function consoleDirectory(from = __dirname): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'dist', 'console');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** GET /console: the built assets under the console's policy; the page is revalidated, never cached stale. */
export function consoleAssets(directory: string | undefined): express.Handler {
  const assets = directory ? express.static(directory, { index: 'index.html', redirect: true, maxAge: 0 }) : undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', 'no-cache');
    if (!assets || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    assets(req, res, next);
  };
}
