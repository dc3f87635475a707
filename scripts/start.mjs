// `npm start`: build if needed, migrate, seed a demo account on an empty database, then run the API
// and the worker. `start:dev`: one `nest build --watch` over the three apps (tsconfig.watch.json)
// keeps dist/ current, and each app runs under Node's own `--watch`, restarted when a file it loaded
// is rewritten. package.json runs this with `exec`: a shell waiting on a command neither passes
// signals on nor (for SIGINT) acts on them.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const node = process.execPath;
const watch = process.argv.includes('--watch');
const cli = ['dist/apps/cli/src/main.js'];
// The apps run with the V8 flags every launcher gives them (package.json config.nodeOptions).
const nodeOptions = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).config.nodeOptions.split(' ');
// --watch-preserve-output: a restart must not clear the other app's lines off the terminal.
const app = (name) => [
  ...nodeOptions,
  ...(watch ? ['--watch', '--watch-preserve-output'] : []),
  `dist/apps/${name}/src/main.js`,
];
const nest = fileURLToPath(new URL('../node_modules/@nestjs/cli/bin/nest.js', import.meta.url));
// A terminal's log format unless the environment names one. The apps read .env themselves; it is
// read here too (the environment still wins) so the ports polled below are theirs.
if (existsSync('.env')) process.loadEnvFile('.env');
const env = { ...process.env, LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty' };
// As the Dockerfile's HEALTHCHECK does: the apps' defaults when unset.
const port = env.PORT || '3000';
const workerPort = env.WORKER_PORT || '3001';
const children = new Set();
let stopping = false;

function run(args, stdout = 'inherit') {
  const child = spawn(node, args, { stdio: ['inherit', stdout, 'inherit'], env });
  children.add(child);
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, exited };
}

let seeded;
let framed = false;

// The demo key is shown once: framed, after the apps' start-up lines, and before exiting whatever happens.
function frame() {
  if (framed) return;
  framed = true;
  const url = `http://localhost:${port}`;
  const key = seeded?.apiKey;
  // A start after the first: the demo key was shown then, and is never shown again.
  const newKey = !key && seeded?.newKey;
  const lines = [
    ...(key ? [`Demo account ${seeded.accountId}: its API key, shown once`, `  export KEY=${key}`, ''] : []),
    ...(newKey
      ? [
          `The demo key was shown on the first start only. A new key for account ${seeded.accountId}:`,
          `  ${newKey}`,
          '',
        ]
      : []),
    `API        ${url}/v1`,
    `Reference  ${url}/docs`,
    `Console    ${url}/console`,
    `Worker     http://localhost:${workerPort}/health/ready`,
    ...(key ? [`Try        curl -H "Authorization: Bearer $KEY" ${url}/v1/pets`] : []),
  ];
  const width = Math.max(...lines.map((l) => l.length));
  process.stdout.write(
    `\n┌${'─'.repeat(width + 2)}┐\n${lines.map((l) => `│ ${l.padEnd(width)} │`).join('\n')}\n└${'─'.repeat(width + 2)}┘\n\n`,
  );
}

async function ready(port, deadline) {
  while (!stopping && Date.now() < deadline) {
    const answered = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(1_000) }).then(
      (res) => res.ok,
      () => false,
    );
    if (answered) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const c of children) c.kill('SIGTERM');
  Promise.all([...children].map((c) => new Promise((r) => c.once('exit', r)))).then(() => {
    frame();
    process.exit(code);
  });
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

/**
 * start:dev's compiler: resolves once its first build is written (type errors are reported, and the
 * output written all the same, as ts-node's transpile-only did). Its lines go to stderr: stdout is the frame's.
 */
function watchBuild() {
  const { child, exited } = run(
    [nest, 'build', '--watch', '--preserveWatchOutput', '-p', 'tsconfig.watch.json'],
    'pipe',
  );
  exited.then(({ code, signal }) => {
    if (stopping) return;
    process.stderr.write(`nest build --watch exited (${signal ?? code})\n`);
    stop(code || 1);
  });
  return new Promise((resolve) => {
    let seen = '';
    child.stdout.on('data', (d) => {
      process.stderr.write(d);
      if (seen === undefined) return;
      seen += d;
      if (/Watching for file changes/.test(seen)) {
        seen = undefined;
        resolve();
      }
    });
  });
}

if (watch) await watchBuild();

// The console is served from dist/console either way: its build takes a second.
for (const step of [
  [watch ? 'scripts/build-console.mjs' : 'scripts/ensure-build.mjs'],
  [...cli, 'migrate'],
  [...cli, 'seed:demo', '--json'],
]) {
  const seeding = step.includes('seed:demo');
  const { child, exited } = run(step, seeding ? 'pipe' : 'inherit');
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  const { code, signal } = await exited;
  if (seeding && out.trim()) seeded = JSON.parse(out);
  if (stopping) break;
  if (code !== 0) {
    process.stderr.write(`${step.join(' ')} failed (${signal ?? code})\n`);
    if (seeded) frame();
    process.exit(1);
  }
}

if (!stopping) {
  for (const name of ['api', 'worker']) {
    run(app(name)).exited.then(({ code, signal }) => {
      // SIGTERM is what stop() sends: an app that ends by it after that stopped as asked.
      const clean = code === 0 || (stopping && signal === 'SIGTERM');
      process.stderr.write(clean ? `${name} stopped cleanly\n` : `${name} exited (${signal ?? code})\n`);
      stop(clean ? 0 : (code ?? 1));
    });
  }
  // A port of 0 is a free one, unknown here: the frame then comes at once.
  const deadline = Date.now() + 60_000;
  await Promise.all([port, workerPort].filter((p) => p !== '0').map((p) => ready(p, deadline)));
  // The apps write their log lines at least every 100 ms (LOG_FLUSH_MS): the last ones come first.
  await new Promise((r) => setTimeout(r, 300));
  if (!stopping) frame();
}
