import { parseBcTimestamptz, withBcTimestamps } from './bc-timestamps';

describe('BC timestamps from Postgres', () => {
  it('reads Feb 29 of 1 BC (year 0, a leap year) as itself, not as Mar 1', () => {
    expect(parseBcTimestamptz('0001-02-29 12:00:00+00 BC')?.toISOString()).toBe('0000-02-29T12:00:00.000Z');
    expect(parseBcTimestamptz('0001-12-31 23:00:00.5+00 BC')?.toISOString()).toBe('0000-12-31T23:00:00.500Z');
    expect(parseBcTimestamptz('0002-12-31 23:00:00-01:30 BC')?.toISOString()).toBe('0000-01-01T00:30:00.000Z');
    expect(parseBcTimestamptz('0003-06-01 00:00:00+00 BC')?.toISOString()).toBe('-000002-06-01T00:00:00.000Z');
  });

  it('leaves every other text to the parser it wraps', () => {
    const parse = withBcTimestamps(() => 'wrapped');
    expect(parse('2099-01-01 00:00:00+00')).toBe('wrapped');
    expect(parseBcTimestamptz('2099-01-01 00:00:00+00')).toBeUndefined();
  });
});
