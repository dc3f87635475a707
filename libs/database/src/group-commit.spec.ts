import { GroupCommit } from './group-commit';

/** A write whose batches the test finishes by hand, recording what each one held. */
function manualWrite() {
  const batches: { items: number[]; finish: (err?: unknown) => void }[] = [];
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push({ items, finish: (err) => (err ? reject(err) : resolve()) });
    });
  return { batches, write };
}

const tick = () => new Promise((r) => setImmediate(r));
const constraintError = Object.assign(new Error('duplicate key'), { code: '23505' });
const isItemError = (err: unknown) => (err as { code?: string }).code === '23505';

describe('GroupCommit', () => {
  it('writes a lone item at once, then batches what arrives while writes are in flight', async () => {
    const { batches, write } = manualWrite();
    const group = new GroupCommit(write, { maxInFlight: 1, maxBatch: 10, isItemError });
    const first = group.submit(1);
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    const rest = [2, 3, 4].map((i) => group.submit(i));
    expect(batches).toHaveLength(1);

    batches[0].finish();
    await first;
    await tick();
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4]]);
    batches[1].finish();
    await Promise.all(rest);
  });

  it('keeps at most maxInFlight batches of at most maxBatch items', async () => {
    const { batches, write } = manualWrite();
    const group = new GroupCommit(write, { maxInFlight: 2, maxBatch: 2, isItemError });
    const all = [1, 2, 3, 4, 5, 6, 7].map((i) => group.submit(i));
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
    batches[0].finish();
    await tick();
    expect(batches.map((b) => b.items)).toEqual([[1], [2], [3, 4]]);
    batches[1].finish();
    batches[2].finish();
    await tick();
    expect(batches.map((b) => b.items)).toEqual([[1], [2], [3, 4], [5, 6], [7]]);
    batches[3].finish();
    batches[4].finish();
    await Promise.all(all);
  });

  it('retries a batch that one item broke item by item: only that item fails', async () => {
    const { batches, write } = manualWrite();
    const group = new GroupCommit(write, { maxInFlight: 1, maxBatch: 10, isItemError });
    const first = group.submit(0);
    const outcomes = [1, 2, 3].map((i) =>
      group.submit(i).then(
        () => 'ok',
        (err: Error) => err.message,
      ),
    );
    batches[0].finish();
    await first;
    await tick();
    batches[1].finish(constraintError);
    await tick();
    expect(batches.slice(2).map((b) => b.items)).toEqual([[1], [2], [3]]);
    batches[2].finish();
    batches[3].finish(constraintError);
    batches[4].finish();
    expect(await Promise.all(outcomes)).toEqual(['ok', 'duplicate key', 'ok']);
  });

  it('fails the whole batch at once on an error that is not one item’s (no database)', async () => {
    const { batches, write } = manualWrite();
    const group = new GroupCommit(write, { maxInFlight: 1, maxBatch: 10, isItemError });
    const first = group.submit(0);
    const outcomes = [1, 2].map((i) =>
      group.submit(i).then(
        () => 'ok',
        (err: Error) => err.message,
      ),
    );
    batches[0].finish();
    await first;
    await tick();
    batches[1].finish(new Error('connect ECONNREFUSED'));
    expect(await Promise.all(outcomes)).toEqual(['connect ECONNREFUSED', 'connect ECONNREFUSED']);
    expect(batches).toHaveLength(2);
  });

  it('hands each caller the result the write returned for its own item', async () => {
    const group = new GroupCommit<number, string>(async (items) => items.map((i) => `row ${i}`), {
      maxInFlight: 1,
      maxBatch: 10,
      isItemError,
    });
    await expect(Promise.all([1, 2, 3].map((i) => group.submit(i)))).resolves.toEqual(['row 1', 'row 2', 'row 3']);
  });
});
