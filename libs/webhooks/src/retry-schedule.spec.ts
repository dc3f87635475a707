import { retryDelayMs } from './retry-schedule';

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
