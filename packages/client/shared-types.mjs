// After pkgroll (`npm run build`): the types generated from openapi.json (src/generated/openapi.ts, about 540 kB,
// types only) ship once, as dist/openapi.d.ts, and both declaration entries import them from there. The sources
// import them as '#openapi', which pkgroll leaves external; inlined, they made each entry 670 kB, and a TypeScript
// user of both formats parsed them twice.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';

const dist = new URL('./dist/', import.meta.url);
copyFileSync(new URL('./src/generated/openapi.ts', import.meta.url), new URL('openapi.d.ts', dist));
for (const entry of ['index.d.mts', 'index.d.cts']) {
  const file = new URL(entry, dist);
  const text = readFileSync(file, 'utf8');
  const shared = text.replaceAll(" from '#openapi';", " from './openapi.js';");
  if (shared === text || shared.includes('#openapi')) throw new Error(`${entry}: no import of '#openapi' to rewrite`);
  writeFileSync(file, shared);
}
