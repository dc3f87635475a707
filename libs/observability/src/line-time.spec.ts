import pino from 'pino';
import { lineTime } from './line-time';

describe('lineTime', () => {
  afterEach(() => jest.useRealTimers());

  /** pino's own ISO timestamp text at `ms`, and lineTime's, from one clock. */
  function both(time: () => string, ms: number): [string, string] {
    jest.setSystemTime(ms);
    return [pino.stdTimeFunctions.isoTime(), time()];
  }

  it("writes pino's isoTime text, byte for byte, across millisecond, second, minute, day and year boundaries", () => {
    jest.useFakeTimers();
    const time = lineTime();
    const start = Date.parse('2026-12-31T23:59:58.990Z');
    const seen: [string, string][] = [];
    // Each millisecond twice (the second from the cache), through the new year.
    for (let ms = start; ms < start + 2_100; ms++) seen.push(both(time, ms), both(time, ms));
    for (const ms of [0, -1, -1_001, Date.parse('1999-12-31T23:59:59.999Z'), Date.parse('2038-01-19T03:14:08.000Z')]) {
      seen.push(both(time, ms));
    }
    expect(seen.filter(([expected, actual]) => expected !== actual)).toEqual([]);
  });
});
