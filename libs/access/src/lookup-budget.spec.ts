import { ApiError } from '@app/errors';
import { LookupBudget } from './lookup-budget';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('not refused');
};

describe('LookupBudget', () => {
  it('refuses a lookup beyond the concurrency with 503 and Retry-After: 1', () => {
    const budget = new LookupBudget(2, 100, () => 0);
    budget.acquire();
    budget.acquire();
    const err = refusal(() => budget.acquire());
    expect([err.status, err.code, err.headers['Retry-After']]).toEqual([503, 'service_unavailable', '1']);
  });

  it('gives a place back once a lookup is released, once only', () => {
    const budget = new LookupBudget(1, 100, () => 0);
    const release = budget.acquire();
    release();
    release();
    budget.acquire();
    expect(() => budget.acquire()).toThrow(ApiError);
  });

  it('refuses beyond the rate per second and refills with time', () => {
    let now = 0;
    const budget = new LookupBudget(100, 3, () => now);
    for (let i = 0; i < 3; i++) budget.acquire()();
    expect(() => budget.acquire()).toThrow(ApiError);
    now += 400;
    expect(() => budget.acquire()()).not.toThrow();
    expect(() => budget.acquire()).toThrow(ApiError);
  });
});
