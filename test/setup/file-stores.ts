// Each test file gets its own database (a copy of the migrated template global setup made) and
// its own redis-server, so no file sees another file's rows, queues or workers: a worker left
// running by an earlier file holds a dropped database and a stopped Redis.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { maintenanceUrl } from '@app/database';
import { REDIS_PID_DIR } from './file-stores-paths';

const template = new URL(process.env.DATABASE_URL!);
const templateName = template.pathname.slice(1);
const slug = basename(expect.getState().testPath ?? 'unknown')
  .replace(/\.[a-z-]*spec\.ts$/, '')
  .replace(/[^a-z0-9]+/gi, '_')
  .toLowerCase()
  .slice(0, 40);
const own = new URL(template);
own.pathname = `/${templateName}_f_${slug}`;
const databaseName = own.pathname.slice(1);

// Chosen before the spec module loads: some read the URLs at import.
const port = Number(
  spawnSync(
    process.execPath,
    ['-e', 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'],
    { encoding: 'utf8' },
  ).stdout.trim(),
);
process.env.DATABASE_URL = own.toString();
process.env.REDIS_URL = `redis://127.0.0.1:${port}/0`;

let redis: ChildProcess | undefined;
const pidFile = join(REDIS_PID_DIR, `${port}.pid`);

async function admin<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: maintenanceUrl(template.toString()) });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  mkdirSync(REDIS_PID_DIR, { recursive: true });
  writeFileSync(pidFile, String(redis.pid));
  await admin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${databaseName}" TEMPLATE "${templateName}"`);
  });
  const probe = new Redis(process.env.REDIS_URL!, { retryStrategy: (n) => (n < 100 ? 50 : null) });
  try {
    await probe.ping();
  } finally {
    probe.disconnect();
  }
});

afterAll(async () => {
  redis?.kill('SIGKILL');
  rmSync(pidFile, { force: true });
  await admin((client) => client.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`));
});
