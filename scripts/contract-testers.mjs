// `node scripts/contract-testers.mjs`: Prism and Portman/newman against a live instance on its own
// stores (CONTRACT_DATABASE_URL / CONTRACT_REDIS_URL), run by .ci/run (docs/internals/contract-testing.md).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import Redis from 'ioredis';
import newman from 'newman';
import { prismCases } from '../test/contract-testers/prism-cases.mjs';

const DATABASE_URL = process.env.CONTRACT_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/petstore_contract';
const REDIS_URL = process.env.CONTRACT_REDIS_URL ?? 'redis://127.0.0.1:6379/12';
// Set when the script finds the db empty: only a db carrying it is ever flushed.
const REDIS_MARK = 'petstore:contract-testers:owned';
const node = process.execPath;
const work = mkdtempSync(join(tmpdir(), 'petstore-contract-'));
const children = [];
const started = Date.now();

function log(line) {
  process.stdout.write(`[contract ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Dropped if it exists: it is this script's. */
async function freshDatabase() {
  const url = new URL(DATABASE_URL);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}

/** Refuses a db that is neither empty nor marked. */
async function claimRedis() {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    if ((await redis.dbsize()) > 0 && !(await redis.exists(REDIS_MARK)))
      throw new Error(`${REDIS_URL} holds data this script did not put there; choose another CONTRACT_REDIS_URL`);
    await redis.flushdb();
    await redis.set(REDIS_MARK, '1');
  } finally {
    redis.disconnect();
  }
}

function start(name, script, env) {
  const child = spawn(node, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  child.on('exit', (code) => {
    if (code && !stopping) process.stderr.write(`${name} exited ${code}: ${stderr}\n`);
  });
  children.push(child);
  return child;
}

async function waitFor(url, ok = (res) => res.ok, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (ok(await fetch(url))) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs} ms`);
    await sleep(200);
  }
}

let stopping = false;
async function stopAll() {
  stopping = true;
  for (const child of children.reverse()) {
    if (child.exitCode !== null) continue;
    child.kill('SIGTERM');
    await Promise.race([new Promise((r) => child.once('exit', r)), sleep(12_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  rmSync(work, { recursive: true, force: true });
}

/** A valid request must pass untouched, an invalid one be refused by Prism and by the API. */
async function runPrism(apiUrl, apiKey, fixtures) {
  const port = await freePort();
  const proxy = spawn(
    node,
    [
      join('node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js'),
      'proxy',
      'openapi.json',
      `${apiUrl}/v1`,
      '--errors',
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--verboseLevel',
      'error',
      '--cors',
      'false',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(proxy);
  const prismUrl = `http://127.0.0.1:${port}`;
  await waitFor(`${prismUrl}/account`, () => true);
  const failures = [];
  const cases = prismCases(fixtures);
  let valid = 0;
  let invalid = 0;
  for (const c of cases) {
    const headers = { Authorization: `Bearer ${apiKey}`, ...(c.headers ?? {}) };
    let body;
    if (c.body !== undefined) {
      body = typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const viaPrism = await fetch(`${prismUrl}${c.path}`, { method: c.method, headers, body });
    const text = await viaPrism.text();
    const prismError = /stoplight\.io\/prism\/errors/.test(text) ? text.slice(0, 400) : null;
    const label = `${c.method} ${c.path} (${c.name})`;
    if (c.valid) {
      valid++;
      if (prismError) failures.push(`${label}: Prism reported ${viaPrism.status} ${prismError}`);
      else if (c.status && viaPrism.status !== c.status)
        failures.push(`${label}: expected ${c.status}, got ${viaPrism.status} ${text.slice(0, 200)}`);
    } else {
      invalid++;
      if (!prismError || viaPrism.status >= 500)
        failures.push(`${label}: Prism did not refuse the invalid request (${viaPrism.status} ${text.slice(0, 200)})`);
      const direct = await fetch(`${apiUrl}/v1${c.path}`, { method: c.method, headers, body });
      if (direct.status < 400 || direct.status >= 500)
        failures.push(`${label}: the API answered the invalid request ${direct.status}`);
    }
  }
  return { name: 'Prism 5.14.2 proxy --errors', cases: cases.length, valid, invalid, failures };
}

async function runPortman(apiUrl, apiKey, fixtures) {
  const config = JSON.parse(readFileSync('test/contract-testers/portman-config.json', 'utf8'));
  const collection = join(work, 'collection.json');
  const configFile = join(work, 'portman-config.json');
  // The fixtures (ids the seeding created, a webhook target on loopback) replace example values.
  const text = JSON.stringify(config).replace(/"\{\{fixture(-number)?:(\w+)\}\}"/g, (_m, number, k) => {
    if (fixtures[k] === undefined) throw new Error(`portman-config.json names an unknown fixture ${k}`);
    return JSON.stringify(number ? fixtures[k] : String(fixtures[k]));
  });
  writeFileSync(configFile, text);
  // newman reads every answer to its end, and an event stream has none: GET /events/stream is left to
  // test/e2e/events/events-stream.e2e-spec.ts (and Prism, which checks the request only).
  const document = JSON.parse(readFileSync('openapi.json', 'utf8'));
  for (const path of Object.keys(document.paths))
    for (const [method, operation] of Object.entries(document.paths[path]))
      if (operation?.responses?.['200']?.content?.['text/event-stream']) delete document.paths[path][method];
  const documentFile = join(work, 'openapi-portman.json');
  writeFileSync(documentFile, JSON.stringify(document));
  const output = execFileSync(
    node,
    [
      join('node_modules', '@apideck', 'portman', 'bin', 'portman'),
      '-l',
      documentFile,
      '-b',
      `${apiUrl}/v1`,
      '-c',
      configFile,
      '-o',
      collection,
      '--includeTests',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
  );
  // Portman reports a config it cannot apply on stdout and goes on: that is a failure here.
  if (/WARNING|must be|should be/.test(output)) throw new Error(`Portman: ${output.slice(-2000)}`);
  const summary = await new Promise((resolve, reject) =>
    newman.run(
      {
        collection: JSON.parse(readFileSync(collection, 'utf8')),
        envVar: [
          { key: 'baseUrl', value: `${apiUrl}/v1` },
          { key: 'bearerToken', value: apiKey },
        ],
        reporters: [],
        timeoutRequest: 10_000,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    ),
  );
  const stats = summary.run.stats;
  const failures = summary.run.failures.map((f) =>
    `${f.source?.name ?? '?'}: ${f.error?.test ?? ''} ${f.error?.message ?? ''}`.trim(),
  );
  return {
    name: 'Portman 1.33 + newman 6.2',
    cases: stats.requests.total,
    assertions: stats.assertions.total,
    failures,
  };
}

async function seed(apiUrl, env) {
  const out = execFileSync(
    node,
    [
      'dist/apps/cli/src/main.js',
      'account:create',
      '--name',
      'contract',
      '--plan',
      'enterprise',
      '--limit-minute',
      '100000',
      '--limit-day',
      '10000000',
      '--json',
    ],
    { env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  const { apiKey } = JSON.parse(out);
  const call = async (method, path, body) => {
    const res = await fetch(`${apiUrl}/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`seeding ${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const category = await call('POST', '/categories', { name: 'Seeded' });
  const pet = await call('POST', '/pets', { name: 'Rex', categoryId: category.id, status: 'available' });
  await call('PUT', `/store/inventory/${pet.id}`, { quantity: 1000 });
  const order = await call('POST', '/store/orders', { petId: pet.id, quantity: 1 });
  const message = await call('POST', '/messages', { message: 'seeded' });
  // Records the deleting operations may remove without taking the others' away.
  const spareCategory = await call('POST', '/categories', { name: 'Spare' });
  const sparePet = await call('POST', '/pets', { name: 'Spare', categoryId: category.id });
  const webhookUrl = `${apiUrl}/health/live`;
  const webhook = await call('POST', '/webhooks', { url: webhookUrl, events: ['pet.created'] });
  const spareWebhook = await call('POST', '/webhooks', { url: webhookUrl, events: ['pet.created'] });
  const delivery = await call('POST', `/webhooks/${webhook.id}/test`);
  const rotateKey = await call('POST', '/keys', { name: 'to rotate' });
  const revokeKey = await call('POST', '/keys', { name: 'to revoke' });
  return {
    apiKey,
    categoryId: category.id,
    petId: pet.id,
    orderId: order.id,
    messageId: message.id,
    spareCategoryId: spareCategory.id,
    sparePetId: sparePet.id,
    webhookId: webhook.id,
    spareWebhookId: spareWebhook.id,
    deliveryId: delivery.id,
    rotateKeyId: rotateKey.id,
    revokeKeyId: revokeKey.id,
    webhookUrl,
  };
}

async function main() {
  execFileSync(node, ['scripts/ensure-build.mjs'], { stdio: 'inherit' });
  await freshDatabase();
  await claimRedis();
  const [port, workerPort] = [await freePort(), await freePort()];
  const env = {
    DATABASE_URL,
    REDIS_URL,
    PORT: String(port),
    WORKER_PORT: String(workerPort),
    // Nothing here scrapes it.
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    DEMO_SEED: 'false',
    // Nothing may leave 127.0.0.1.
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
  };
  execFileSync(node, ['dist/apps/cli/src/main.js', 'migrate'], { env: { ...process.env, ...env }, stdio: 'ignore' });
  start('api', 'dist/apps/api/src/main.js', env);
  start('worker', 'dist/apps/worker/src/main.js', env);
  const apiUrl = `http://127.0.0.1:${port}`;
  await waitFor(`${apiUrl}/health/ready`);
  await waitFor(`http://127.0.0.1:${workerPort}/health/ready`);
  log(`API ${apiUrl} and worker up`);
  const fixtures = await seed(apiUrl, env);
  const results = [
    await runPrism(apiUrl, fixtures.apiKey, fixtures),
    await runPortman(apiUrl, fixtures.apiKey, fixtures),
  ];
  let failed = 0;
  for (const r of results) {
    const figures = Object.entries(r)
      .filter(([k]) => !['name', 'failures'].includes(k))
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    log(`${r.name}: ${figures}, failures ${r.failures.length}`);
    for (const f of r.failures) process.stdout.write(`  - ${f}\n`);
    failed += r.failures.length;
  }
  return failed;
}

main()
  .then(async (failed) => {
    await stopAll();
    log(failed ? `${failed} failure(s)` : 'all third-party checks passed');
    process.exit(failed ? 1 : 0);
  })
  .catch(async (err) => {
    process.stderr.write(`contract testers: ${err.stack ?? err}\n`);
    await stopAll();
    process.exit(1);
  });
