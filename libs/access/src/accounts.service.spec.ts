import { ApiError } from '@app/errors';
import { checkPlan } from './accounts.service';

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected a failure');
}

describe('checkPlan', () => {
  it('takes a fixed plan without limits', () => {
    for (const plan of ['free', 'pro', 'business'] as const) {
      expect(checkPlan(plan, {})).toEqual({ limitPerMinute: null, limitPerDay: null });
    }
  });

  it('takes an enterprise plan with two positive limits', () => {
    expect(checkPlan('enterprise', { limitPerMinute: 5, limitPerDay: 7 })).toEqual({
      limitPerMinute: 5,
      limitPerDay: 7,
    });
  });

  it('refuses an unknown plan, limits on a fixed plan, and missing, zero, fractional or huge enterprise limits', () => {
    const cases: [Parameters<typeof checkPlan>, string][] = [
      [['gold' as never, {}], 'plan'],
      [['free', { limitPerMinute: 10 }], 'plan'],
      [['enterprise', {}], 'limitPerMinute'],
      [['enterprise', { limitPerMinute: 0, limitPerDay: 0 }], 'limitPerMinute'],
      [['enterprise', { limitPerMinute: 10, limitPerDay: 0 }], 'limitPerDay'],
      [['enterprise', { limitPerMinute: 1.5, limitPerDay: 10 }], 'limitPerMinute'],
      [['enterprise', { limitPerMinute: 10, limitPerDay: 3_000_000_000 }], 'limitPerDay'],
    ];
    for (const [args, field] of cases) {
      const err = failure(() => checkPlan(...args));
      expect(err).toBeInstanceOf(ApiError);
      expect(err.code).toBe('validation_failed');
      expect(err.details).toEqual([expect.objectContaining({ field })]);
    }
  });
});
