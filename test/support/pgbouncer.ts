import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './free-port';
import { postgresTempDir, postgresUser } from './postgres-user';

/**
 * A real PgBouncer (Debian's package, as operators run it) in transaction mode in front of the
 * local Postgres, on a free port, for one test file. Its files live in a temporary directory
 * removed by stop(); the process is stopped by its PID.
 */
export class PgBouncer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly port: number,
  ) {}

  /** `postgresUrl`'s database through the pooler, with at most `poolSize` server connections. */
  static async inFrontOf(postgresUrl: string, poolSize: number): Promise<PgBouncer> {
    const target = new URL(postgresUrl);
    const dir = postgresTempDir('petstore-pgbouncer-');
    const port = await freePort();
    writeFileSync(join(dir, 'userlist.txt'), `"${target.username || 'postgres'}" ""\n`);
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${target.hostname} port=${target.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'userlist.txt')}`,
        'pool_mode = transaction',
        `default_pool_size = ${poolSize}`,
        'max_client_conn = 500',
        `logfile = ${join(dir, 'pgbouncer.log')}`,
      ].join('\n'),
    );
    // PgBouncer refuses to run as root: as root (CI), it drops to the postgres user.
    const asRoot = postgresUser() !== undefined;
    const child = spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const bouncer = new PgBouncer(child, dir, port);
    await bouncer.waitUntilListening();
    return bouncer;
  }

  /** `postgresUrl` with its host and port pointed at the pooler. */
  urlFor(postgresUrl: string): string {
    const url = new URL(postgresUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = once(this.child, 'exit');
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitUntilListening(): Promise<void> {
    let stderr = '';
    this.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    for (let i = 0; i < 100; i++) {
      if (this.child.exitCode !== null) throw new Error(`pgbouncer exited: ${stderr.trim()}`);
      const up = await new Promise<boolean>((resolve) => {
        const socket = connect(this.port, '127.0.0.1', () => resolve(true)).on('error', () => resolve(false));
        socket.once('connect', () => socket.end());
      });
      if (up) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await this.stop();
    throw new Error('pgbouncer did not listen within 5 s');
  }
}
