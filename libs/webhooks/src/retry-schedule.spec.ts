import { maxAttempts, retryDelayMs } from './retry-schedule';

describe('retryDelayMs', () => {
  it('doubles with each failure, jittered between half and all of it', () => {
    expect(retryDelayMs(1, 1000, () => 0)).toBe(500);
    expect(retryDelayMs(1, 1000, () => 1)).toBe(1000);
    expect(retryDelayMs(3, 1000, () => 0)).toBe(2000);
    expect(retryDelayMs(3, 1000, () => 1)).toBe(4000);
  });

  it('is capped at 6 hours', () => {
    expect(retryDelayMs(40, 30_000, () => 1)).toBe(6 * 3600 * 1000);
  });

  it('spreads retries that fail together', () => {
    const delays = new Set(Array.from({ length: 20 }, () => retryDelayMs(4, 30_000)));
    expect(delays.size).toBeGreaterThan(1);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(120_000);
  });
});

describe('maxAttempts', () => {
  it('is 33 with the defaults (30 s, 3 days): the bound docs/security.md and the recover operation state', () => {
    expect(maxAttempts(30_000, 3 * 86_400_000)).toBe(33);
  });

  it('counts the first attempt and each retry due within the horizon', () => {
    // Retries 50, 100, 200, 400 and 800 ms apart: the last at 1,550 ms; the next (+1,600) is past 2 s.
    expect(maxAttempts(100, 2_000)).toBe(6);
    expect(maxAttempts(100, 10)).toBe(1);
  });
});
