import { Cluster } from 'ioredis';
import { LearningCluster } from './learning-cluster';

/** What ioredis 6 keeps privately: the array its connect() and duplicate() read. */
const startupOf = (cluster: Cluster) => (cluster as unknown as { startupNodes: unknown }).startupNodes;

describe('LearningCluster (the ioredis internal it relies on)', () => {
  const clients: Cluster[] = [];
  afterAll(() => clients.forEach((c) => c.disconnect()));
  const lazy = (cluster: Cluster) => (clients.push(cluster), cluster);

  it('ioredis keeps the startup array it is given, not a copy (fails if a release copies or renames it)', () => {
    const seeds = [{ host: '127.0.0.1', port: 1 }];
    const plain = lazy(new Cluster(seeds, { lazyConnect: true }));
    expect(startupOf(plain)).toBe(seeds);
  });

  it('shares that one array with its copies', () => {
    const cluster = lazy(LearningCluster.fromSeeds([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true }));
    const copy = lazy(cluster.duplicate());
    expect(startupOf(copy)).toBe(startupOf(cluster));
  });
});
