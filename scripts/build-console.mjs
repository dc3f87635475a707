// Builds the console (apps/console: Preact + uPlot) into dist/console: one script, one
// stylesheet and the page, all served by the API at /console (no CDN at run time).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';

const out = 'dist/console';
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { console: 'apps/console/src/main.tsx' },
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'iife',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: out,
  logLevel: 'warning',
  legalComments: 'linked',
});
copyFileSync('apps/console/src/index.html', `${out}/index.html`);
