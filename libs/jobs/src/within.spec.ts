import { within } from './within';

describe('within', () => {
  it('settles with the promise when it answers in time', async () => {
    await expect(within(Promise.resolve(7), 1_000)).resolves.toBe(7);
  });

  it('rejects naming what did not answer once the time has passed', async () => {
    await expect(within(new Promise(() => undefined), 10, 'outbox relay')).rejects.toThrow(
      /^outbox relay: no answer within 10 ms$/,
    );
  });

  it('leaves no timer behind when the promise wins', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await within(Promise.resolve(), 60_000);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });
});
