import { ANONYMOUS_LIMITS, limitsFor, LimitsConfigError, PLAN_LIMITS } from './plan-limits';

describe('limitsFor', () => {
  it('gives each fixed plan the figures of the interface', () => {
    const none = { limitPerMinute: null, limitPerDay: null };
    expect(limitsFor({ plan: 'free', ...none })).toEqual({ perMinute: 60, perDay: 1_000 });
    expect(limitsFor({ plan: 'pro', ...none })).toEqual({ perMinute: 300, perDay: 10_000 });
    expect(limitsFor({ plan: 'business', ...none })).toEqual({ perMinute: 1_000, perDay: 100_000 });
    expect(ANONYMOUS_LIMITS).toEqual(PLAN_LIMITS.free);
  });

  it('gives an enterprise account its own limits', () => {
    expect(limitsFor({ plan: 'enterprise', limitPerMinute: 5_000, limitPerDay: 90_000 })).toEqual({
      perMinute: 5_000,
      perDay: 90_000,
    });
  });

  it('refuses an enterprise account with missing or zero limits, and a plan without limits', () => {
    expect(() => limitsFor({ plan: 'enterprise', limitPerMinute: null, limitPerDay: 10 })).toThrow(LimitsConfigError);
    expect(() => limitsFor({ plan: 'enterprise', limitPerMinute: 0, limitPerDay: 0 })).toThrow(LimitsConfigError);
    expect(() => limitsFor({ plan: 'gold' as never, limitPerMinute: null, limitPerDay: null })).toThrow(
      /plan gold has no limits/,
    );
  });
});
