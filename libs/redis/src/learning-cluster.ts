import { Cluster, ClusterOptions } from 'ioredis';

type Address = { host: string; port: number };

/** Cluster options with ioredis's default reply mapping (legacy: RESP2 shapes), which the class's type is for. */
type LegacyClusterOptions = ClusterOptions & {
  redisOptions?: ClusterOptions['redisOptions'] & { replyMapping?: 'legacy' };
};

/**
 * A Redis Cluster client that starts again from every node it has seen, not only from its seeds.
 *
 * ioredis restarts a client, and every `duplicate()` BullMQ makes, from its seeds only; with the
 * seeds gone, a copy never reconnects (docs/internals/decisions.md). Here the client and its
 * copies share one list: the seeds, then the nodes of the last slots refresh. This relies on
 * ioredis keeping the array it is given: test/service/redis-cluster-client.service-spec.ts fails if it copies.
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
    return new LearningCluster(this.startup, this.seeds, {
      ...this.options,
      ...overrideOptions,
    } as LegacyClusterOptions);
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
