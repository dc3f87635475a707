import { JobCatalog, WorkerFeature } from './job-catalog';
import { defineJob } from './job-definition';
import { defineQueue } from './queue-definition';

const queue = defineQueue('catalog-test');
const Plain = defineJob<{ id: string }>({ name: 'catalog.plain', queue, jobId: ({ id }) => id });
const Folded = defineJob<{ id: string; accountId: number }>({
  name: 'catalog.folded',
  queue,
  jobId: ({ id }) => id,
  deduplicationId: ({ accountId }) => `account-${accountId}`,
  dropCompleted: true,
});
const feature = (jobs: WorkerFeature['jobs']): WorkerFeature => ({ jobs, sweeps: [], retention: [] });

describe('JobCatalog', () => {
  const catalog = new JobCatalog([feature([Plain]), feature([Folded])]);

  it("answers a listed job's deduplication from its definition", () => {
    expect(catalog.deduplication('catalog.folded', { id: 'a', accountId: 7 })).toEqual({ id: 'account-7' });
  });

  it('answers no deduplication for a job not listed (a newer release’s)', () => {
    expect(catalog.deduplication('catalog.unknown', { accountId: 7 })).toBeUndefined();
  });

  it('drops on completion only the jobs whose definition asks for it', () => {
    expect(['catalog.plain', 'catalog.folded', 'catalog.unknown'].map((n) => catalog.dropsCompleted(n))).toEqual([
      false,
      true,
      false,
    ]);
  });

  it("names each of the jobs' queues once", () => {
    expect(catalog.queues).toEqual(['catalog-test']);
  });

  it('refuses a job listed twice', () => {
    expect(() => new JobCatalog([feature([Plain]), feature([Plain])])).toThrow('job catalog.plain is listed twice');
  });
});
