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
