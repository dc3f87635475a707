// `npm start`: build if needed, migrate, seed a demo account on an empty database (printing
// its key once), then run the API and the worker together; Ctrl-C or SIGTERM stops both.
import { execFileSync, spawn } from 'node:child_process';

const node = process.execPath;
execFileSync(node, ['scripts/ensure-build.mjs'], { stdio: 'inherit' });
execFileSync(node, ['dist/apps/cli/main.js', 'migrate'], { stdio: 'inherit' });
execFileSync(node, ['dist/apps/cli/main.js', 'seed:demo'], { stdio: 'inherit' });

const children = ['api', 'worker'].map((app) => {
  const child = spawn(node, [`dist/apps/${app}/main.js`], { stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    process.stderr.write(`${app} exited (${signal ?? code})\n`);
    stop(code ?? 1);
  });
  return child;
});

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.on('exit', r)) : null))).then(() =>
    process.exit(code),
  );
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
