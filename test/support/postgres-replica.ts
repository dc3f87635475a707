import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './free-port';
import { postgresUser } from './postgres-user';

const BIN = join('/usr/lib/postgresql', readdirSync('/usr/lib/postgresql').sort().pop()!, 'bin');


/**
 * A primary and a streaming replica of the machine's Postgres binaries, for one test file: the
 * primary made by initdb (trust on loopback, replication allowed), the replica by pg_basebackup
 * from it (-R: it follows the primary), each on a free port. The machine's own server is not
 * touched (its pg_hba.conf allows no replication connection). Stopped by PID; files removed.
 */
export class PostgresReplica {
  private constructor(
    private readonly dir: string,
    private readonly servers: { primary: ChildProcess; replica?: ChildProcess },
    readonly primaryPort: number,
    readonly replicaPort: number,
  ) {}

  static async start(): Promise<PostgresReplica> {
    // Postgres binaries run as the postgres user when we are root.
    const user = postgresUser();
    const dir = mkdtempSync(join(tmpdir(), 'petstore-replica-'));
    if (user) chownSync(dir, user.uid, user.gid);
    const run = (bin: string, args: string[]) => execFileSync(join(BIN, bin), args, { ...user, stdio: 'pipe' });
    const [primaryPort, replicaPort] = [await freePort(), await freePort()];
    const primaryData = join(dir, 'primary');
    run('initdb', ['-D', primaryData, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    appendFileSync(join(primaryData, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    const primary = PostgresReplica.server(primaryData, primaryPort, user);
    const cluster = new PostgresReplica(dir, { primary }, primaryPort, replicaPort);
    try {
      await cluster.waitForConnections(primaryPort);
      const replicaData = join(dir, 'replica');
      run('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(primaryPort),
        '-U',
        'postgres',
        '-D',
        replicaData,
        '-R',
        '-X',
        'stream',
      ]);
      cluster.servers.replica = PostgresReplica.server(replicaData, replicaPort, user);
      await cluster.waitForConnections(replicaPort);
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  private static server(data: string, port: number, user: ReturnType<typeof postgresUser>): ChildProcess {
    return spawn(
      join(BIN, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${data}`,
        '-c',
        'fsync=off',
      ],
      { ...user, stdio: 'ignore' },
    );
  }

  url(port: number, database = 'petstore'): string {
    return `postgres://postgres@127.0.0.1:${port}/${database}`;
  }

  async query<T>(port: number, sql: string, database = 'postgres'): Promise<T[]> {
    const client = new Client({ connectionString: this.url(port, database) });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  }

  /** Stops the replica (the API must go on reading from the primary). */
  async stopReplica(): Promise<void> {
    await PostgresReplica.halt(this.servers.replica);
  }

  async stop(): Promise<void> {
    await Promise.all([PostgresReplica.halt(this.servers.replica), PostgresReplica.halt(this.servers.primary)]);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private static async halt(server?: ChildProcess): Promise<void> {
    if (!server || server.exitCode !== null || server.signalCode) return;
    const exited = once(server, 'exit');
    server.kill('SIGINT'); // fast shutdown
    await exited;
  }

  private async waitForConnections(port: number): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (
        await this.query(port, 'SELECT 1').then(
          () => true,
          () => false,
        )
      )
        return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`postgres on ${port} did not accept connections within 10 s`);
  }
}
