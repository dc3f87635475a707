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
    const slots = new AccountSlots({ concurrency: 2 });
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
    const slots = new AccountSlots({ concurrency: 1 });
    const busy = gate();
    const first = slots.run(1, busy.work);
    await expect(slots.run(2, async () => 'other account')).resolves.toBe('other account');
    busy.release();
    await first;
  });

  it('frees the slot when the work fails', async () => {
    const slots = new AccountSlots({ concurrency: 1 });
    await expect(slots.run(1, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(1, async () => 'next')).resolves.toBe('next');
    expect(slots.load(1)).toEqual({ active: 0, waiting: 0 });
  });

  describe('with a share of the clock', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    const read = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));

    /** Reads of `ms` each, queued at once, run to the end on the fake clock: the times they started at. */
    async function startTimes(slots: AccountSlots, accountId: number, reads: number, ms: number): Promise<number[]> {
      const t0 = Date.now();
      const started: number[] = [];
      let done = false;
      void Promise.all(
        Array.from({ length: reads }, () => slots.run(accountId, () => (started.push(Date.now() - t0), read(ms)()))),
      ).then(() => (done = true));
      while (!done) await jest.advanceTimersByTimeAsync(1);
      return started;
    }

    it('paces a busy account to its share once its burst is spent', async () => {
      const slots = new AccountSlots({ concurrency: 1, share: 0.25, burstMs: 100 });
      // The burst pays for the first read; each later one waits three times its length.
      expect(await startTimes(slots, 1, 4, 100)).toEqual([0, 100, 500, 900]);
    });

    it('never delays an account that stays within its share', async () => {
      const slots = new AccountSlots({ concurrency: 1, share: 0.5, burstMs: 0 });
      const delays: number[] = [];
      // 5 ms reads every 20 ms: a quarter of the clock.
      for (let i = 0; i < 10; i++) {
        delays.push(...(await startTimes(slots, 1, 1, 5)));
        await jest.advanceTimersByTimeAsync(15);
      }
      expect(delays).toEqual(Array(10).fill(0));
    });

    it("never makes one account wait for another's overspending", async () => {
      const slots = new AccountSlots({ concurrency: 1, share: 0.1, burstMs: 0 });
      const busy = [slots.run(1, read(100)), slots.run(1, read(100))];
      await jest.advanceTimersByTimeAsync(150);
      expect(slots.load(1)).toEqual({ active: 0, waiting: 1 });
      expect(await startTimes(slots, 2, 1, 10)).toEqual([0]);
      await jest.advanceTimersByTimeAsync(2_000);
      await Promise.all(busy);
    });

    it('forgets an idle account only once its credit is whole again', async () => {
      const slots = new AccountSlots({ concurrency: 1, share: 0.5, burstMs: 100 });
      await startTimes(slots, 1, 1, 100);
      expect(slots.tracked).toBe(1);
      // It spent its 100 ms burst: whole again 200 ms later, at half the clock.
      await jest.advanceTimersByTimeAsync(199);
      expect(slots.tracked).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(slots.tracked).toBe(0);
    });
  });
});
