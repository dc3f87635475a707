// Builds the three apps when dist/ is missing or older than the sources, so a fresh clone
// needs only `npm ci && npm start`.
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// From the repository, whatever the working directory (`npx petstore` keeps the caller's).
const root = fileURLToPath(new URL('..', import.meta.url));
const outputs = [...['api', 'worker', 'cli'].map((a) => `dist/apps/${a}/src/main.js`), 'dist/console/console.js'].map(
  (o) => join(root, o),
);

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const built = outputs.every(existsSync) ? Math.min(...outputs.map((o) => statSync(o).mtimeMs)) : 0;
if (built < Math.max(...['apps', 'libs', 'packages/client/src'].map((d) => newest(join(root, d))))) {
  process.stderr.write('building (dist/ is missing or stale)...\n');
  // The build talks on stderr: stdout belongs to the command that follows (`npx petstore ... --json | jq`).
  execSync('npm run build', { cwd: root, stdio: ['ignore', process.stderr, process.stderr] });
}
