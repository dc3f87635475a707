import { loadConfig } from '@app/config';
import { DomainUnitOfWork } from '@app/events';
import { JobRun } from '@app/jobs';
import { EventFanOutService } from './event-fan-out.service';

describe('EventFanOutService.fanOutPending', () => {
  /** A unit of work whose statements are pages of the given event counts (the statement itself is not run). */
  const fanOut = (pages: number[], steps: string[]) => {
    const uow = {
      run: async () => {
        steps.push('page');
        return { events: pages.shift() ?? 0, deliveries: 1 };
      },
    } as unknown as DomainUnitOfWork;
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

  it('reads page after page until one comes back short', async () => {
    const steps: string[] = [];
    const made = await fanOut([2, 2, 1, 2], steps).fanOutPending({ accountId: 1, eventId: 1 }, run(steps));
    expect(steps).toEqual(['release', 'page', 'page', 'page']);
    expect(made).toBe(3);
  });
});
