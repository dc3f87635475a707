import { loadConfig } from '@app/config';
import { UnitOfWork } from '@app/transactions';
import { JobRun } from '@app/jobs';
import { EventFanOutService } from './event-fan-out.service';

describe('EventFanOutService.fanOutPending', () => {
  /** A unit of work whose statements are pages of the given event counts (the statement itself is not run). */
  const fanOut = (pages: (number | Error)[], steps: string[]) => {
    const uow = {
      run: async () => {
        steps.push('page');
        await new Promise((resolve) => setImmediate(resolve));
        const events = pages.shift() ?? 0;
        if (events instanceof Error) throw events;
        return { events, deliveries: 1 };
      },
    } as unknown as UnitOfWork;
    return new EventFanOutService(uow, loadConfig({ WORKER_BATCH_SIZE: '2' }));
  };
  const run = (steps: string[]) =>
    ({
      releaseDeduplication: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        steps.push('release');
      },
    }) as unknown as JobRun;

  it('releases its deduplication before it reads the first page', async () => {
    const steps: string[] = [];
    await fanOut([0], steps).fanOutPending({ accountId: 1, eventId: 1 }, run(steps));
    expect(steps).toEqual(['release', 'page']);
  });

  it('stops after a short first page', async () => {
    const steps: string[] = [];
    const made = await fanOut([1, 2], steps).fanOutPending({ accountId: 1, eventId: 1 }, run(steps));
    expect({ steps, made }).toEqual({ steps: ['release', 'page'], made: 1 });
  });

  it('after a full first page, reads two pages at a time, each loop until its page comes back short', async () => {
    const steps: string[] = [];
    // First page 2; then loop A 2, loop B 1 (B stops), A 2, A 0 (A stops).
    const made = await fanOut([2, 2, 1, 2], steps).fanOutPending({ accountId: 1, eventId: 1 }, run(steps));
    expect({ pages: steps.length - 1, made }).toEqual({ pages: 5, made: 5 });
  });

  it("fails with a page's error, the other loop reading no page after the one it had started", async () => {
    const steps: string[] = [];
    const failure = new Error('page failed');
    const job = fanOut([2, failure, 2, 2, 2, 2], steps).fanOutPending({ accountId: 1, eventId: 1 }, run(steps));
    await expect(job).rejects.toBe(failure);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The first page, A's failing one, and B's page already under way.
    expect(steps.length - 1).toBe(3);
  });
});
