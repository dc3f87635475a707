import { Cluster, ClusterOptions } from 'ioredis';

type Address = { host: string; port: number };

/**
 * A Redis Cluster client that starts again from every node it has seen, not only from its seeds.
 *
 * ioredis starts a cluster client from its startup nodes, and starts again from them whenever it
 * has lost every connection; `duplicate()`, which BullMQ calls for each worker's blocking reads,
 * copies them too. Once the seeds were masters since killed, such a copy never connected again
 * and its queue was no longer consumed (the Redis Cluster test, about 1 run in 10). Here the
 * client and its copies share one list of startup nodes, grown with the cluster's nodes on each
 * slots refresh. ioredis keeps the array it is given rather than a copy of it, which is what
 * lets the list grow: test/service/redis-cluster-client.service-spec.ts fails if it ever copies.
 */
export class LearningCluster extends Cluster {
  constructor(
    private readonly startup: Address[],
    options: ClusterOptions,
  ) {
    super(startup, options);
    this.on('refresh', () => this.learn());
  }

  /** A copy on the same, growing list of startup nodes (unless it is given its own). */
  override duplicate(overrideStartupNodes: Address[] = [], overrideOptions: ClusterOptions = {}): Cluster {
    if (overrideStartupNodes.length) return super.duplicate(overrideStartupNodes, overrideOptions);
    return new LearningCluster(this.startup, { ...this.options, ...overrideOptions });
  }

  private learn(): void {
    const known = new Set(this.startup.map((a) => `${a.host}:${a.port}`));
    for (const node of this.nodes('all')) {
      const { host, port } = node.options;
      if (host && port && !known.has(`${host}:${port}`)) {
        known.add(`${host}:${port}`);
        this.startup.push({ host, port });
      }
    }
  }
}
