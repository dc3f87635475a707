import { sql } from '@app/database';
import { defineJob, stagedJob } from './job-definition';
import { defineQueue } from './queue-definition';
import { LostJobSource, SweepSource, sweepSource } from './sweep-source';

const TestJob = defineJob<{ id: string }>({ name: 'sweep.test', queue: defineQueue('sweep-test'), jobId: (p) => p.id });

describe('sweepSource', () => {
  const Source = sweepSource({
    name: 'test_rows',
    due: ({ limit }) => sql`SELECT ${limit}`,
    job: ([row]) => stagedJob(TestJob, { id: String(row.id) }),
  });

  it('makes a provider the lost-job sweep discovers, named after the source', () => {
    expect([Reflect.hasMetadata(LostJobSource.KEY, Source), Source.name]).toEqual([true, 'TestRowsSweepSource']);
  });

  it("gives each instance the declared statement and the row's job", () => {
    const source: SweepSource = new Source();
    const row = { id: 7, accountId: 1, traceparent: null, dueAt: '' };
    expect([source.due({ olderThanMs: 1, limit: 2, after: null }).values, source.job([row]).jobId]).toEqual([[2], '7']);
  });
});
