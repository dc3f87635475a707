// Builds the three apps when dist/ is missing or older than the sources, so a fresh clone
// needs only `npm ci && npm start`.
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

const outputs = [...['api', 'worker', 'cli'].map((a) => `dist/apps/${a}/main.js`), 'dist/console/console.js'];

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const built = outputs.every(existsSync) ? Math.min(...outputs.map((o) => statSync(o).mtimeMs)) : 0;
if (built < Math.max(newest('apps'), newest('libs'), newest('packages/client/src'))) {
  process.stderr.write('building (dist/ is missing or stale)...\n');
  execSync('npm run build', { stdio: ['ignore', 'inherit', 'inherit'] });
  // webpack leaves an unchanged output file alone (old mtime), which would look stale forever.
  const now = new Date();
  for (const o of outputs) utimesSync(o, now, now);
}
