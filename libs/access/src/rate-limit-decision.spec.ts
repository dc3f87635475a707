import { decide, rateLimitHeaders, windowResets } from './rate-limit-decision';

const FREE = { perMinute: 60, perDay: 1_000 };
/** 2031-03-04T05:06:00.000Z: a minute boundary, for readable offsets. */
const MINUTE = Date.UTC(2031, 2, 4, 5, 6, 0);
const MIDNIGHT = Date.UTC(2031, 2, 5);

describe('windowResets', () => {
  it('aligns to the next UTC minute and the next UTC midnight, even on the boundary itself', () => {
    expect(windowResets(MINUTE)).toEqual({ minute: MINUTE + 60_000, day: MIDNIGHT });
    expect(windowResets(MINUTE + 59_999)).toEqual({ minute: MINUTE + 60_000, day: MIDNIGHT });
    expect(windowResets(MIDNIGHT - 1).day).toBe(MIDNIGHT);
    expect(windowResets(MIDNIGHT).day).toBe(MIDNIGHT + 86_400_000);
  });
});

describe('decide + rateLimitHeaders', () => {
  it('describes the window with the fewest remaining, the minute on a tie', () => {
    const admitted = decide({ outcome: 0, minuteCount: 10, dayCount: 500, ms: 0 }, FREE, MINUTE + 1_000, false);
    expect(admitted.reported.name).toBe('minute');
    const h = rateLimitHeaders(admitted, MINUTE + 1_000);
    expect(h).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '50',
      'X-RateLimit-Reset': String((MINUTE + 60_000) / 1000),
      'X-RateLimit-Used': '10',
      'X-RateLimit-Resource': 'minute',
      'RateLimit-Policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      RateLimit: '"minute";r=50;t=59',
    });
    expect(h['Retry-After']).toBeUndefined();

    const dayLow = decide({ outcome: 0, minuteCount: 1, dayCount: 995, ms: 0 }, FREE, MINUTE, false);
    expect(rateLimitHeaders(dayLow, MINUTE)).toEqual(
      expect.objectContaining({
        'X-RateLimit-Remaining': '5',
        'X-RateLimit-Resource': 'day',
        'X-RateLimit-Reset': String(MIDNIGHT / 1000),
        RateLimit: `"day";r=5;t=${(MIDNIGHT - MINUTE) / 1000}`,
      }),
    );

    const tie = decide({ outcome: 0, minuteCount: 55, dayCount: 995, ms: 0 }, FREE, MINUTE, false);
    expect(tie.reported.name).toBe('minute');
  });

  it('reports an exhausted day window even when the minute is exhausted too', () => {
    const d = decide({ outcome: 1, minuteCount: 60, dayCount: 1_000, ms: 0 }, FREE, MINUTE + 30_000, false);
    expect(d.reported.name).toBe('day');
    expect(d.retryAfterSeconds).toBe((MIDNIGHT - MINUTE - 30_000) / 1000);
  });

  it.each([
    [0, 60],
    [1, 60],
    [500, 60],
    [999, 60],
    [1_000, 59],
    [15_000, 45],
    [30_200, 30],
    [59_000, 1],
    [59_001, 1],
    [59_999, 1],
  ])('Retry-After %i ms into a refused minute is %i s (rounded up, never 0)', (offset, expected) => {
    const now = MINUTE + offset;
    const d = decide({ outcome: 1, minuteCount: 60, dayCount: 60, ms: 0 }, FREE, now, false);
    const h = rateLimitHeaders(d, now);
    expect(h['Retry-After']).toBe(String(expected));
    expect(h['X-RateLimit-Remaining']).toBe('0');
    // Never earlier than X-RateLimit-Reset, and the two formats agree.
    expect(now / 1000 + expected).toBeGreaterThanOrEqual(Number(h['X-RateLimit-Reset']));
    expect(h.RateLimit).toBe(`"minute";r=0;t=${expected}`);
  });

  it('a refused day window waits until UTC midnight', () => {
    const now = MIDNIGHT - 90_500;
    const d = decide({ outcome: 1, minuteCount: 3, dayCount: 1_000, ms: 0 }, FREE, now, false);
    expect(d.reported.name).toBe('day');
    expect(rateLimitHeaders(d, now)['Retry-After']).toBe('91');
  });

  it('a ban answers Retry-After = ban time left, rounded up', () => {
    const d = decide({ outcome: 3, minuteCount: 60, dayCount: 60, ms: 899_001 }, FREE, MINUTE, false);
    expect(d).toEqual(expect.objectContaining({ outcome: 'banned', newlyBanned: true, retryAfterSeconds: 900 }));
    const later = decide({ outcome: 2, minuteCount: 60, dayCount: 60, ms: 1 }, FREE, MINUTE, false);
    expect(later).toEqual(expect.objectContaining({ outcome: 'banned', newlyBanned: false, retryAfterSeconds: 1 }));
  });

  it('never reports a negative remaining (limits lowered inside a window)', () => {
    const d = decide({ outcome: 1, minuteCount: 80, dayCount: 80, ms: 0 }, FREE, MINUTE, false);
    expect(d.minute.remaining).toBe(0);
    expect(d.reported.name).toBe('minute');
  });
});
