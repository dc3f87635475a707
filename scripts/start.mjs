// `npm start`: build if needed, migrate, seed a demo account on an empty database (printing
// its key once), then run the API and the worker together. SIGINT or SIGTERM, at any step,
// stops the current child (both apps, once running) and exits when they have exited.
// package.json runs this with `exec`: npm forwards signals to the shell it starts, and a
// shell waiting on a command neither passes them on nor (for SIGINT) acts on them.
import { spawn } from 'node:child_process';

const node = process.execPath;
const children = new Set();
let stopping = false;

function run(args) {
  const child = spawn(node, args, { stdio: 'inherit' });
  children.add(child);
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, exited };
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const c of children) c.kill('SIGTERM');
  Promise.all([...children].map((c) => new Promise((r) => c.once('exit', r)))).then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

for (const step of [
  ['scripts/ensure-build.mjs'],
  ['dist/apps/cli/main.js', 'migrate'],
  ['dist/apps/cli/main.js', 'seed:demo'],
]) {
  const { code, signal } = await run(step).exited;
  if (stopping) break;
  if (code !== 0) {
    process.stderr.write(`${step.join(' ')} failed (${signal ?? code})\n`);
    process.exit(1);
  }
}

if (!stopping) {
  for (const app of ['api', 'worker']) {
    run([`dist/apps/${app}/main.js`]).exited.then(({ code, signal }) => {
      process.stderr.write(`${app} exited (${signal ?? code})\n`);
      stop(code ?? 1);
    });
  }
}
