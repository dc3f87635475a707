import { Cluster, ClusterOptions } from 'ioredis';

type Address = { host: string; port: number };

/** Cluster options with ioredis's default reply mapping (legacy: RESP2 shapes), which the class's type is for. */
type LegacyClusterOptions = ClusterOptions & {
  redisOptions?: ClusterOptions['redisOptions'] & { replyMapping?: 'legacy' };
};

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
 *
 * Rechecked for ioredis 6, which still has no option for this. Its one documented hook,
 * `clusterRetryStrategy` replacing `this.startupNodes`, is consulted only after a connection
 * loss the client did not ask for; BullMQ 6 restarts a cluster's blocking copy with
 * `disconnect()` then `connect()`, which reads the startup nodes as they are and then ends
 * ("None of startup nodes is available"): the service spec above fails with that hook in
 * place of this class (docs/operations-at-scale.md).
 */
export class LearningCluster extends Cluster {
  /** `startup` begins with the seeds, `seeds` long; the rest is what the client learnt. */
  private constructor(
    private readonly startup: Address[],
    private readonly seeds: number,
    options: LegacyClusterOptions,
  ) {
    super(startup, options);
    this.on('refresh', () => this.learn());
  }

  static fromSeeds(seeds: Address[], options: LegacyClusterOptions): LearningCluster {
    return new LearningCluster(
      seeds.map(({ host, port }) => ({ host, port })),
      seeds.length,
      options,
    );
  }

  /** A copy on the same list of startup nodes (unless it is given its own). */
  override duplicate(overrideStartupNodes: Address[] = [], overrideOptions: ClusterOptions = {}): Cluster {
    if (overrideStartupNodes.length) return super.duplicate(overrideStartupNodes, overrideOptions);
    return new LearningCluster(this.startup, this.seeds, { ...this.options, ...overrideOptions } as LegacyClusterOptions);
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
