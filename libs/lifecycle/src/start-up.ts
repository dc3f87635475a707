import { createServer, Server } from 'node:net';
import type { DatabaseHost } from '@app/config';
import { clientOf } from '@app/database';
import { connectRedis, RedisTarget, redisServes } from '@app/redis';
import { within } from '@app/jobs';

// TypeORM's own retries would take 9 x 3 s.
const CONNECT_TIMEOUT_MS = 2_000;

export class StartUpError extends Error {}

function where(url: string, defaultPort: number): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || defaultPort}`;
}

function reason(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return (e.message || e.code || String(err)).replace(/\s+/g, ' ');
}

// The URL is never printed: it may carry a password. `hosts`: DATABASE_URL's servers when it names several
// (config.databaseHosts): one of them must take writes.
export async function requirePostgres(databaseUrl: string, hosts: DatabaseHost[] = []): Promise<void> {
  const client = clientOf(databaseUrl, hosts, CONNECT_TIMEOUT_MS);
  // A server that drops the connection after accepting it emits 'error' besides the rejection.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    const at =
      hosts.length > 1
        ? `taking writes among ${hosts.map((h) => `${h.host}:${h.port}`).join(',')}`
        : `at ${where(databaseUrl, 5432)}`;
    throw new StartUpError(`Postgres ${at} (DATABASE_URL) unreachable: ${reason(err)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

// REDIS_URL naming a node of a cluster would answer MOVED for most keys: refused too.
export async function requireRedis(target: RedisTarget): Promise<void> {
  const variable = target.redisCluster ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL';
  const at = target.redisCluster
    ? target.redisCluster.nodes.map((n) => `${n.host}:${n.port}`).join(',')
    : where(target.redisUrl, 6379);
  const client = connectRedis(
    target,
    {
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    },
    { clusterRetryStrategy: () => null, lazyConnect: true },
  );
  // The cause (ECONNREFUSED, ...) comes as an event; the rejection only says the connection closed.
  let cause: Error | undefined;
  client.on('error', (err: Error) => (cause ??= err));
  let problem: string | undefined;
  try {
    // A cluster with a node down can leave a command waiting on it: each step is bounded.
    await within(client.connect(), CONNECT_TIMEOUT_MS);
    if (!(await within(redisServes(client), CONNECT_TIMEOUT_MS)))
      problem = target.redisCluster
        ? 'the cluster does not serve every slot (CLUSTER INFO: cluster_state is not ok)'
        : 'it is a node of a Redis Cluster: list the cluster in REDIS_CLUSTER_NODES instead';
  } catch (err) {
    problem = `unreachable: ${reason(cause ?? err)}`;
  } finally {
    client.disconnect();
  }
  if (problem) throw new StartUpError(`Redis at ${at} (${variable}) ${problem}`);
}

/**
 * Listens on `port` (0: one the system picks) at `host` (undefined: every interface, BIND_ADDRESS
 * unset); the one wording of a port that cannot be listened on.
 */
export function listenOn(server: Server, variable: string, port: number, host?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const at = host === undefined ? '' : ` at ${host} (BIND_ADDRESS)`;
    server.once('error', (err) =>
      reject(new StartUpError(`cannot listen on ${variable} ${port}${at}: ${err.message}`)),
    );
    server.listen(port, host, resolve);
  });
}

/**
 * A port another process holds is named before anything is connected or built: a boot takes
 * seconds, the probe a millisecond. The real listen still reports a port lost in between.
 */
export async function requirePortsFree(ports: Record<string, number>, host?: string): Promise<void> {
  for (const [variable, port] of Object.entries(ports)) {
    if (port === 0) continue;
    const probe = createServer();
    await listenOn(probe, variable, port, host);
    await new Promise((resolve) => probe.close(resolve));
  }
}

export function startOrExit(app: string, start: () => Promise<void>): void {
  start().catch((err: unknown) => {
    process.stderr.write(`${app} failed to start: ${reason(err)}\n`);
    process.exit(1);
  });
}
