// Builds dist/cjs (require) and dist/esm (import), each with its declarations, from the same sources.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const dist = join(root, 'dist');
const esm = join(dist, 'esm');

rmSync(dist, { recursive: true, force: true });
// nodenext emits CommonJS here (the package has no "type": "module"); the ESM build resolves as a bundler would.
for (const [flags, outDir] of [
  [['--module', 'nodenext', '--moduleResolution', 'nodenext'], join(dist, 'cjs')],
  [['--module', 'es2022', '--moduleResolution', 'bundler'], esm],
]) {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), ...flags, '--outDir', outDir], {
    stdio: 'inherit',
  });
}
// Node's ESM loader and TypeScript's node16 resolution need the extension on relative specifiers; tsc keeps them as written.
const relative = /(\bfrom\s*|\bimport\s*\(\s*)(['"])(\.{1,2}(?:\/[^'"]*)?)\2/g;
const withExtension = (spec) => (spec.endsWith('.js') ? spec : /^\.{1,2}$/.test(spec) ? `${spec}/index.js` : `${spec}.js`);
for (const file of readdirSync(esm, { recursive: true })) {
  if (!/\.(js|d\.ts)$/.test(file)) continue;
  const path = join(esm, file);
  const text = readFileSync(path, 'utf8');
  writeFileSync(path, text.replace(relative, (_, lead, quote, spec) => `${lead}${quote}${withExtension(spec)}${quote}`));
}
writeFileSync(join(esm, 'package.json'), '{ "type": "module" }\n');
