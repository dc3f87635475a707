import { Logger } from '@nestjs/common';
import { ApiError } from '@app/errors';
import { LookupBudget, LookupDeclined } from './lookup-budget';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('not refused');
};

describe('LookupBudget', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => (warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined)));
  afterEach(() => warn.mockRestore());

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

  it('gives one address at most a quarter of the lookups at once, leaving the rest to others', () => {
    const budget = new LookupBudget(8, 100, () => 0);
    budget.acquire('ip:a');
    budget.acquire('ip:a');
    expect(() => budget.acquire('ip:a')).toThrow(ApiError);
    for (let i = 0; i < 6; i++) budget.acquire(`ip:other${i}`);
    expect(() => budget.acquire('ip:b')).toThrow(ApiError);
  });

  it('gives one address at most a quarter of the lookups a second, again the next second', () => {
    let now = 0;
    const budget = new LookupBudget(100, 8, () => now);
    budget.acquire('ip:a')();
    budget.acquire('ip:a')();
    expect(() => budget.acquire('ip:a')).toThrow(ApiError);
    expect(() => budget.acquire('ip:b')()).not.toThrow();
    now = 1_000;
    expect(() => budget.acquire('ip:a')()).not.toThrow();
  });

  it('gives a limited address one lookup a second, then declines it for its own refusal', () => {
    let now = 0;
    const budget = new LookupBudget(100, 100, () => now);
    budget.acquire('ip:a', true)();
    expect(() => budget.acquire('ip:a', true)).toThrow(LookupDeclined);
    now = 1_000;
    expect(() => budget.acquire('ip:a', true)()).not.toThrow();
  });

  it('logs refusals at most once a second, with how many there were', () => {
    let now = 0;
    const budget = new LookupBudget(1, 100, () => now);
    budget.acquire();
    for (; now < 2_500; now += 10) expect(() => budget.acquire()).toThrow(ApiError);
    expect(warn.mock.calls).toEqual([
      [{ refused: 1 }, 'key lookup budget spent: new keys answered 503'],
      [{ refused: 100 }, 'key lookup budget spent: new keys answered 503'],
      [{ refused: 100 }, 'key lookup budget spent: new keys answered 503'],
    ]);
  });
});
