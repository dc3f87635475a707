import { ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from './free-port';
import { postgresTempDir } from './postgres-user';

const run = promisify(execFile);
/** Debian's postgresql-15-auto-failover is built for this server. */
const PG_CTL = process.env.PG_AUTOCTL_PG_CTL ?? '/usr/lib/postgresql/15/bin/pg_ctl';
const DATABASE = 'petstore_ha';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The monitor's health checks, made short so that a lost primary is noticed within seconds (the defaults:
 * checks every 5 s, 2 retries, and 20 s without news from the node's keeper before a failover), and the wait
 * for a lost primary to acknowledge its demotion (30 s by default, most of the default failover time). In
 * production that wait must stay above the keepers' network_partition_timeout (20 s): an isolated primary
 * demotes itself before its standby is promoted. Here the primary's machine is gone, not isolated.
 */
const MONITOR_SETTINGS: Record<string, number> = {
  'pgautofailover.health_check_period': 1_000,
  'pgautofailover.health_check_timeout': 1_000,
  'pgautofailover.health_check_max_retries': 1,
  'pgautofailover.health_check_retry_delay': 500,
  'pgautofailover.node_considered_unhealthy_timeout': 2_000,
  'pgautofailover.primary_demote_timeout': 2_000,
};

interface Node {
  name: string;
  port: number;
  pgdata: string;
  /** `pg_autoctl` (its keeper and the postgres it starts), in a process group of its own. */
  child?: ChildProcess;
}

const running = (child?: ChildProcess): boolean =>
  child !== undefined && child.exitCode === null && child.signalCode === null;

/**
 * A real pg_auto_failover formation (Debian's package, as operators run it): a monitor, a primary and a
 * synchronous standby (`synchronous_standby_names = 'ANY 1 (...)'`, the engine's default with one standby),
 * on free loopback ports, for one test file. Its directory lives under a temporary directory removed by
 * stop(); every process is stopped by its process group, never by name. pg_autoctl refuses to run as root:
 * as root (CI), it runs as the postgres user.
 */
export class PgAutoFailover {
  private constructor(
    private readonly dir: string,
    private readonly monitor: Node,
    readonly nodes: Node[],
  ) {}

  static async start(): Promise<PgAutoFailover> {
    const dir = postgresTempDir('petstore-pg-auto-failover-');
    const node = async (name: string): Promise<Node> => ({ name, port: await freePort(), pgdata: join(dir, name) });
    const formation = new PgAutoFailover(dir, await node('monitor'), [await node('node1'), await node('node2')]);
    try {
      await formation.startMonitor();
      const [first, second] = formation.nodes;
      formation.spawnNode(first, 'create');
      await formation.waitUntil(async () => (await formation.states()).get(first.name) === 'single', 60_000);
      formation.spawnNode(second, 'create');
      await formation.waitForStandby();
      const sync = await formation.query(first.port, 'SHOW synchronous_standby_names');
      if (!/^ANY 1 \(/.test(sync)) throw new Error(`pg_auto_failover: not synchronous (${sync})`);
    } catch (err) {
      await formation.stop();
      throw err;
    }
    return formation;
  }

  /** DATABASE_URL for the service: both nodes, the read-write one wanted (what `pg_autoctl show uri` prints). */
  get url(): string {
    const hosts = this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
    return `postgres://postgres@${hosts}/${DATABASE}?target_session_attrs=read-write`;
  }

  /** One node's database, for checks made by the test itself. */
  urlOf(port: number): string {
    return `postgres://postgres@127.0.0.1:${port}/${DATABASE}`;
  }

  /** The port of the node that takes writes now (`transaction_read_only` off), or undefined. */
  async primary(): Promise<number | undefined> {
    const live = this.nodes.filter((n) => running(n.child));
    const modes = await Promise.all(
      live.map((n) => this.query(n.port, 'SHOW transaction_read_only', 1_000).catch(() => 'down')),
    );
    return live.find((_, i) => modes[i] === 'off')?.port;
  }

  /** Waits for a node (other than `not`) to take writes; its port. */
  async waitForPrimary(timeoutMs = 30_000, not?: number): Promise<number> {
    let port: number | undefined;
    await this.waitUntil(async () => {
      port = await this.primary();
      return port !== undefined && port !== not;
    }, timeoutMs);
    return port!;
  }

  /**
   * The primary's machine lost: its postmaster killed with SIGKILL, and its pg_autoctl with it (a keeper left
   * alive restarts Postgres in place, a crash recovery rather than a failover). Returns the dead node's port.
   */
  async killPrimary(): Promise<number> {
    const port = await this.waitForPrimary(5_000);
    const node = this.nodes.find((n) => n.port === port)!;
    const postmaster = Number(readFileSync(join(node.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(postmaster, 'SIGKILL');
    await this.killNode(node);
    return port;
  }

  /** Starts a stopped node again: pg_autoctl rewinds it and it rejoins as the synchronous standby. */
  async rejoin(port: number, timeoutMs = 60_000): Promise<void> {
    const node = this.nodes.find((n) => n.port === port)!;
    if (!running(node.child)) this.spawnNode(node, 'run');
    await this.waitForStandby(timeoutMs);
  }

  /** The engine's planned switchover (`pg_autoctl perform switchover`), to its end. */
  async switchover(timeoutSeconds = 60): Promise<void> {
    await this.autoctl(['perform', 'switchover', '--pgdata', this.monitor.pgdata, '--wait', String(timeoutSeconds)]);
  }

  /** Every node's state as the monitor reports it, e.g. { node1: 'primary', node2: 'secondary' } ('changing' in between). */
  async states(): Promise<Map<string, string>> {
    const client = new Client({
      connectionString: `postgres://postgres@127.0.0.1:${this.monitor.port}/pg_auto_failover`,
      connectionTimeoutMillis: 1_000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ name: string; reported: string; goal: string }>(
        'SELECT nodename AS name, reportedstate::text AS reported, goalstate::text AS goal FROM pgautofailover.node',
      );
      return new Map(rows.map((r) => [r.name, r.reported === r.goal ? r.reported : 'changing']));
    } catch {
      return new Map();
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.nodes, this.monitor].map((n) => this.killNode(n)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A one-row, one-column query on one node. */
  async query(port: number, sql: string, timeoutMs = 3_000): Promise<string> {
    const client = new Client({ connectionString: this.urlOf(port), connectionTimeoutMillis: timeoutMs });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query({ text: sql, rowMode: 'array' });
      return String(rows[0]?.[0]);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  log(name: string, lines = 8): string {
    try {
      return readFileSync(join(this.dir, `${name}.log`), 'utf8')
        .trim()
        .split('\n')
        .slice(-lines)
        .join(' | ');
    } catch {
      return '(none)';
    }
  }

  private async startMonitor(): Promise<void> {
    const m = this.monitor;
    this.spawn(m, ['create', 'monitor', '--pgdata', m.pgdata, '--pgport', String(m.port), ...common()]);
    const url = `postgres://postgres@127.0.0.1:${m.port}/pg_auto_failover`;
    await this.waitUntil(async () => {
      const client = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1 FROM pgautofailover.formation');
        for (const [name, value] of Object.entries(MONITOR_SETTINGS))
          await client.query(`ALTER SYSTEM SET ${name} = ${value}`);
        await client.query('SELECT pg_reload_conf()');
        return true;
      } catch {
        return false;
      } finally {
        await client.end().catch(() => undefined);
      }
    }, 60_000);
  }

  private spawnNode(node: Node, how: 'create' | 'run'): void {
    const monitor = `postgres://autoctl_node@127.0.0.1:${this.monitor.port}/pg_auto_failover?sslmode=prefer`;
    const args =
      how === 'run'
        ? ['run', '--pgdata', node.pgdata]
        : [
            'create',
            'postgres',
            '--pgdata',
            node.pgdata,
            '--pgport',
            String(node.port),
            '--name',
            node.name,
            '--dbname',
            DATABASE,
            '--monitor',
            monitor,
            ...common(),
          ];
    this.spawn(node, args);
  }

  /** `pg_autoctl ...args` for the life of a node, in a process group of its own, as postgres when we are root. */
  private spawn(node: Node, args: string[]): void {
    const [cmd, argv] = this.command([...args, ...(args[0] === 'create' ? ['--run'] : [])]);
    const log = join(this.dir, `${node.name}.log`);
    // The shell only opens the log (appending: a node started again keeps its history) and execs.
    node.child = spawn('sh', ['-c', `exec "$@" >>'${log}' 2>&1`, 'sh', cmd, ...argv], {
      detached: true,
      stdio: 'ignore',
    });
  }

  private command(args: string[]): [string, string[]] {
    const env = [
      `XDG_CONFIG_HOME=${join(this.dir, 'config')}`,
      `XDG_DATA_HOME=${join(this.dir, 'data')}`,
      `XDG_RUNTIME_DIR=${join(this.dir, 'run')}`,
    ];
    return process.getuid?.() === 0
      ? ['runuser', ['-u', 'postgres', '--', 'env', ...env, 'pg_autoctl', ...args]]
      : ['env', [...env, 'pg_autoctl', ...args]];
  }

  private autoctl(args: string[]): Promise<{ stdout: string; stderr: string }> {
    const [cmd, argv] = this.command(args);
    return run(cmd, argv, { timeout: 120_000 });
  }

  /** SIGKILL to the node's whole process group (runuser, pg_autoctl, its postgres and backends). */
  private async killNode(node: Node): Promise<void> {
    const child = node.child;
    if (!child?.pid || !running(child)) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await this.waitUntil(async () => !running(child), 10_000).catch(() => undefined);
  }

  /**
   * Waits until one node is primary and the other its secondary. A spread checkpoint (pg_basebackup's
   * default, which pg_autoctl uses) would take minutes on an idle server: an immediate CHECKPOINT on the
   * primary ends it at once.
   */
  private async waitForStandby(timeoutMs = 60_000): Promise<void> {
    await this.waitUntil(async () => {
      const states = await this.states();
      const values = this.nodes.map((n) => states.get(n.name));
      if (values.includes('primary') && values.includes('secondary')) return true;
      const primary = this.nodes.find((n) => ['single', 'wait_primary', 'primary'].includes(states.get(n.name) ?? ''));
      if (primary) await this.query(primary.port, 'CHECKPOINT').catch(() => undefined);
      return false;
    }, timeoutMs);
  }

  private async waitUntil(test: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await test())) {
      for (const n of [this.monitor, ...this.nodes])
        if (n.child && !running(n.child) && n.child.exitCode !== null)
          throw new Error(`pg_auto_failover ${n.name} exited (${n.child.exitCode}): ${this.log(n.name)}`);
      if (Date.now() > deadline)
        throw new Error(
          `pg_auto_failover: not as expected within ${timeoutMs} ms; ${[...(await this.states())].join(', ')}; ` +
            this.nodes.map((n) => `${n.name}: ${this.log(n.name)}`).join(' || '),
        );
      await sleep(250);
    }
  }
}

function common(): string[] {
  return ['--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl', '--pgctl', PG_CTL];
}
