import { AccountSlots } from './account-slots';

/** A piece of work that runs until released. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { work: () => done, release };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('AccountSlots', () => {
  it("runs at most `limit` of one account's reads at once, the rest in order", async () => {
    const slots = new AccountSlots(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) => slots.run(1, () => (started.push(i), g.work())));
    await turn();
    expect(started).toEqual([0, 1]);
    expect(slots.load(1)).toEqual({ active: 2, waiting: 2 });
    gates[1].release();
    await turn();
    expect(started).toEqual([0, 1, 2]);
    gates[0].release();
    gates[2].release();
    gates[3].release();
    await Promise.all(runs);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(slots.load(1)).toEqual({ active: 0, waiting: 0 });
  });

  it("never makes one account's reads wait for another's", async () => {
    const slots = new AccountSlots(1);
    const busy = gate();
    const first = slots.run(1, busy.work);
    await expect(slots.run(2, async () => 'other account')).resolves.toBe('other account');
    busy.release();
    await first;
  });

  it('frees the slot when the work fails', async () => {
    const slots = new AccountSlots(1);
    await expect(slots.run(1, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(1, async () => 'next')).resolves.toBe('next');
    expect(slots.load(1)).toEqual({ active: 0, waiting: 0 });
  });
});
