import { Cluster, ClusterOptions } from 'ioredis';

type Address = { host: string; port: number };

/**
 * A Redis Cluster client that starts again from every node it has seen, not only from its seeds.
 *
 * ioredis starts a cluster client from its startup nodes, and starts again from them whenever it
 * has lost every connection; `duplicate()`, which BullMQ calls for each worker's blocking reads,
 * copies them too. Once the seeds were masters since killed, such a copy never connected again
 * and its queue was no longer consumed (the Redis Cluster test, about 1 run in 10). Here the
 * client and its copies share one list of startup nodes: the seeds, then the cluster's nodes as
 * of the last slots refresh (replaced, not added to, so nodes long gone do not pile up). ioredis
 * keeps the array it is given rather than a copy of it, which is what lets the list change:
 * test/service/redis-cluster-client.service-spec.ts fails if it ever copies.
 */
export class LearningCluster extends Cluster {
  /** `startup` begins with the seeds, `seeds` long; the rest is what the client learnt. */
  private constructor(
    private readonly startup: Address[],
    private readonly seeds: number,
    options: ClusterOptions,
  ) {
    super(startup, options);
    this.on('refresh', () => this.learn());
  }

  static fromSeeds(seeds: Address[], options: ClusterOptions): LearningCluster {
    return new LearningCluster(
      seeds.map(({ host, port }) => ({ host, port })),
      seeds.length,
      options,
    );
  }

  /** A copy on the same list of startup nodes (unless it is given its own). */
  override duplicate(overrideStartupNodes: Address[] = [], overrideOptions: ClusterOptions = {}): Cluster {
    if (overrideStartupNodes.length) return super.duplicate(overrideStartupNodes, overrideOptions);
    return new LearningCluster(this.startup, this.seeds, { ...this.options, ...overrideOptions });
  }

  private learn(): void {
    const seen = new Set(this.startup.slice(0, this.seeds).map((a) => `${a.host}:${a.port}`));
    const learnt: Address[] = [];
    for (const node of this.nodes('all')) {
      const { host, port } = node.options;
      if (host && port && !seen.has(`${host}:${port}`)) {
        seen.add(`${host}:${port}`);
        learnt.push({ host, port });
      }
    }
    this.startup.splice(this.seeds, this.startup.length - this.seeds, ...learnt);
  }
}
