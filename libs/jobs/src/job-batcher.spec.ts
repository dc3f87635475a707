import { JobBatcher } from './job-batcher';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('JobBatcher', () => {
  it('runs the items submitted together as one batch once maxSize are waiting', async () => {
    const batches: number[][] = [];
    const batcher = new JobBatcher<number, number>(
      async (items) => {
        batches.push(items);
        return items.map((i) => i * 10);
      },
      3,
      60_000,
    );
    const results = await Promise.all([1, 2, 3].map((i) => batcher.submit(i)));
    expect(batches).toEqual([[1, 2, 3]]);
    expect(results).toEqual([10, 20, 30]);
  });

  it('runs a partial batch waitMs after its first item', async () => {
    const batches: number[][] = [];
    const batcher = new JobBatcher<number, void>(
      async (items) => {
        batches.push(items);
        return items.map(() => undefined);
      },
      100,
      20,
    );
    const done = Promise.all([batcher.submit(1), batcher.submit(2)]);
    await tick(5);
    expect(batches).toEqual([]);
    await done;
    expect(batches).toEqual([[1, 2]]);
  });

  it('fails only the item whose outcome is an Error', async () => {
    const batcher = new JobBatcher<number, number>(
      async (items) => items.map((i) => (i === 2 ? new Error('two is poison') : i)),
      2,
      60_000,
    );
    const [one, two] = await Promise.allSettled([batcher.submit(1), batcher.submit(2)]);
    expect(one).toEqual({ status: 'fulfilled', value: 1 });
    expect(two).toEqual({ status: 'rejected', reason: new Error('two is poison') });
  });

  it('fails every item of a batch whose run throws', async () => {
    const batcher = new JobBatcher<number, number>(
      async () => {
        throw new Error('database away');
      },
      2,
      60_000,
    );
    const outcomes = await Promise.allSettled([batcher.submit(1), batcher.submit(2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  });
});
