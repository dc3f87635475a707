import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { canListen, freePort } from './free-port';

const run = promisify(execFile);
/** Redis Cluster nodes talk to each other on their port plus this. */
const BUS_OFFSET = 10_000;

/** A free port whose cluster bus port is free too: redis-server exits when either is taken or out of range. */
async function freeNodePort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + BUS_OFFSET <= 65_535 && (await canListen(port + BUS_OFFSET))) return port;
  }
}

interface ClusterNode {
  port: number;
  child: ChildProcess;
}

/** Neither exited nor killed by a signal: the one test of "this node's process is still there". */
const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

/**
 * A real Redis Cluster (3 masters, a replica each) of the machine's redis-server, on free
 * loopback ports, for one test file: the processes are stopped by PID and their directory removed.
 * A short node timeout makes a replica take over a stopped master within a few seconds.
 */
export class RedisCluster {
  private constructor(
    private readonly nodes: ClusterNode[],
    private readonly dir: string,
  ) {}

  static async start(nodeTimeoutMs = 2_000): Promise<RedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-cluster-'));
    const nodes: ClusterNode[] = [];
    for (let i = 0; i < 6; i++) {
      const port = await freeNodePort();
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          String(nodeTimeoutMs),
          '--save',
          '',
          '--appendonly',
          'no',
          // A replica's first sync starts at once, not after the 5 s a master waits for more replicas to join it.
          '--repl-diskless-sync-delay',
          '0',
          '--loglevel',
          'warning',
          '--logfile',
          join(dir, `redis-${port}.log`),
        ],
        { stdio: 'ignore' },
      );
      nodes.push({ port, child });
    }
    const cluster = new RedisCluster(nodes, dir);
    try {
      for (const node of nodes) await cluster.waitFor(node.port, () => true);
      await run('redis-cli', [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ]);
      for (const node of nodes) {
        await cluster.waitFor(node.port, (info) => info.includes('cluster_state:ok'), 30_000);
      }
      // Each replica in sync with its master: a replica that never synced does not take over.
      await cluster.waitUntil(async () => {
        const roles = await Promise.all(nodes.map((n) => cluster.cli(n.port, 'INFO', 'replication')));
        const synced = roles.filter((r) => r.includes('role:slave') && r.includes('master_link_status:up'));
        return synced.length === 3;
      });
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** REDIS_CLUSTER_NODES: two seeds are enough for a client to find the rest. */
  get seeds(): string {
    return this.nodes
      .slice(0, 2)
      .map((n) => `127.0.0.1:${n.port}`)
      .join(',');
  }

  get ports(): number[] {
    return this.nodes.map((n) => n.port);
  }

  async cli(port: number, ...args: string[]): Promise<string> {
    return (await run('redis-cli', ['-p', String(port), ...args])).stdout;
  }

  async slotOf(key: string): Promise<number> {
    return Number((await this.cli(this.aLiveNode(), 'CLUSTER', 'KEYSLOT', key)).trim());
  }

  /** The port of the master serving a key's slot. */
  async masterOf(key: string): Promise<number> {
    const slot = await this.slotOf(key);
    const range = (await this.slotRanges()).find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`slot ${slot} is not served`);
    return range[2][1];
  }

  /** The ports of the masters serving slots now. */
  async masters(): Promise<number[]> {
    return [...new Set((await this.slotRanges()).map((range) => range[2][1]))];
  }

  /** A master's keys matching a pattern. */
  async keys(port: number, pattern: string): Promise<string[]> {
    return (await this.cli(port, '--scan', '--pattern', pattern)).split('\n').filter(Boolean);
  }

  /** Stops a node's process (SIGKILL: a crash, no goodbye to its peers). */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port)!;
    if (!running(node.child)) return;
    const exited = once(node.child, 'exit');
    node.child.kill('SIGKILL');
    await exited;
  }

  /**
   * Kills a master (-9) and waits until its replica serves its slots and every live node sees
   * the cluster whole again. A cluster needs a majority of its masters to elect a replica: kill
   * one master at a time.
   */
  async failOver(port: number, timeoutMs = 30_000): Promise<void> {
    await this.kill(port);
    await this.waitUntil(async () => {
      const served = await this.slotRanges().catch(() => []);
      if (!served.length || served.some((range) => range[2][1] === port)) return false;
      const live = this.nodes.filter((n) => running(n.child));
      const infos = await Promise.all(live.map((n) => this.cli(n.port, 'CLUSTER', 'INFO').catch(() => '')));
      return infos.every((info) => info.includes('cluster_state:ok'));
    }, timeoutMs);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.kill(n.port)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async slotRanges(): Promise<[number, number, [string, number, string]][]> {
    return JSON.parse(await this.cli(this.aLiveNode(), '--json', 'CLUSTER', 'SLOTS'));
  }

  /** The port of a node still running. */
  aLiveNode(): number {
    return this.nodes.find((n) => running(n.child))!.port;
  }

  /** Waits for a node's CLUSTER INFO to pass `test`; fails at once, with the node's log, if its process exits. */
  private async waitFor(port: number, test: (info: string) => boolean, timeoutMs = 10_000): Promise<void> {
    const { child } = this.nodes.find((n) => n.port === port)!;
    await this.waitUntil(async () => {
      if (!running(child)) return true;
      const info = await this.cli(port, 'CLUSTER', 'INFO').catch(() => '');
      return Boolean(info) && test(info);
    }, timeoutMs).catch(() => {
      throw new Error(`redis node ${port}: not ready within ${timeoutMs} ms; its log: ${this.log(port)}`);
    });
    if (!running(child)) {
      throw new Error(`redis node ${port}: exited (${child.exitCode ?? child.signalCode}); its log: ${this.log(port)}`);
    }
  }

  private log(port: number): string {
    try {
      return readFileSync(join(this.dir, `redis-${port}.log`), 'utf8').trim().split('\n').slice(-5).join(' | ');
    } catch {
      return '(none)';
    }
  }

  private async waitUntil(test: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await test())) {
      if (Date.now() > deadline) throw new Error(`redis cluster: not as expected within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
