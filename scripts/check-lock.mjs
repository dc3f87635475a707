// Fails when an optional dependency of a locked package is missing from package-lock.json: `npm install` leaves out
// one its registry does not serve (a platform binary), and `npm ci` then refuses the lock as out of sync.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { packages } = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));

// Node's resolution: the package's own node_modules, then that of each enclosing folder up to the root.
function locked(from, name) {
  for (let dir = from; ; dir = dirname(dir)) {
    if (!dir.endsWith('node_modules') && packages[join(dir, 'node_modules', name)]) return true;
    if (dir === '.') return false;
  }
}

const missing = [];
let checked = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    checked += 1;
    if (!locked(path || '.', name)) missing.push(`${path || '(root)'} -> ${name}@${entry.optionalDependencies[name]}`);
  }
}
if (missing.length > 0) {
  console.error(`package-lock.json lacks ${missing.length} optional dependencies (npm ci will refuse it):`);
  for (const m of missing) console.error(`  ${m}`);
  process.exit(1);
}
console.log(`package-lock.json: all ${checked} optional dependencies of locked packages are locked`);
