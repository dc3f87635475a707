// Reaches ioredis Cluster's private `startupNodes` (checked against ioredis 6.0.0): kept for correctness, no speed gain
// (no public way to re-seed a reconnect; bench/results/2026-12-02-0445-reaches.md). Guard: learning-cluster.spec.ts.
import { Cluster, ClusterOptions } from 'ioredis';

type Address = { host: string; port: number };

// The class's type is for ioredis's default reply mapping (legacy: RESP2 shapes).
type LegacyClusterOptions = ClusterOptions & {
  redisOptions?: ClusterOptions['redisOptions'] & { replyMapping?: 'legacy' };
};

// The client and its `duplicate()`s share one list of startup nodes: the seeds, then the nodes of the last slots
// refresh (docs/internals/decisions/0015-learning-cluster-client.md).
export class LearningCluster extends Cluster {
  /** The first `seeds` entries are the seeds; the rest is what the client learnt. */
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

  /** Shares the startup nodes unless given its own. */
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
