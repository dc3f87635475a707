// `npm start`: build if needed, migrate, seed a demo account on an empty database, then run the API
// and the worker (`start:dev`: from the sources under `node --watch`). package.json runs this with
// `exec`: a shell waiting on a command neither passes signals on nor (for SIGINT) acts on them.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const node = process.execPath;
const watch = process.argv.includes('--watch');
// Types are left to `npm run typecheck`.
const fromSources = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];
const cli = watch ? [...fromSources, 'apps/cli/src/main.ts'] : ['dist/apps/cli/src/main.js'];
// The apps run with the V8 flags every launcher gives them (package.json config.nodeOptions).
const nodeOptions = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).config.nodeOptions.split(' ');
// --watch-preserve-output: a restart must not clear the other app's lines off the terminal.
const app = (name) =>
  watch
    ? [...nodeOptions, '--watch', '--watch-preserve-output', ...fromSources, `apps/${name}/src/main.ts`]
    : [...nodeOptions, `dist/apps/${name}/src/main.js`];
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

// The console is served from dist/console either way: its build takes a second.
for (const step of [
  [watch ? 'scripts/build-console.mjs' : 'scripts/ensure-build.mjs'],
  [...cli, 'migrate'],
  [...cli, 'seed:demo'],
]) {
  const { code, signal } = await run(step).exited;
  if (stopping) break;
  if (code !== 0) {
    process.stderr.write(`${step.join(' ')} failed (${signal ?? code})\n`);
    process.exit(1);
  }
}

if (!stopping) {
  for (const name of ['api', 'worker']) {
    run(app(name)).exited.then(({ code, signal }) => {
      process.stderr.write(`${name} exited (${signal ?? code})\n`);
      stop(code ?? 1);
    });
  }
}
