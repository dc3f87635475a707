import { dateTimeProblem, parseDateTime, SAFE_ID_TEXT } from './input-rules';

describe('SAFE_ID_TEXT', () => {
  const id = new RegExp(`^${SAFE_ID_TEXT}$`);
  const MAX = Number.MAX_SAFE_INTEGER;

  it('matches every id from 1 to 2^53-1 at the edges of each digit it spells out', () => {
    const edges = [1, 9, 10, 999_999_999_999_999, 10 ** 15, 8_999_999_999_999_999, MAX - 1, MAX];
    for (let i = 0; i < String(MAX).length; i++) {
      // The largest number below MAX that differs from it first at digit i.
      const digits = String(MAX).split('');
      if (digits[i] === '0') continue;
      digits[i] = String(Number(digits[i]) - 1);
      for (let j = i + 1; j < digits.length; j++) digits[j] = '9';
      if (digits[0] !== '0') edges.push(Number(digits.join('')));
    }
    for (const n of edges) expect([n, id.test(String(n))]).toEqual([n, true]);
  });

  it('refuses 0, leading zeros and every number above 2^53-1', () => {
    for (const text of [
      '0',
      '01',
      '',
      '9007199254740992',
      '9007199254740993',
      '9007199254741000',
      '9999999999999999',
      '10000000000000000',
    ]) {
      expect([text, id.test(text)]).toEqual([text, false]);
    }
  });
});

describe('parseDateTime (RFC 3339 section 5.6 date-time)', () => {
  const iso = (text: string) => parseDateTime(text)?.toISOString();

  it('reads years 0000 to 0099 as themselves, not as 1900 to 1999', () => {
    expect(iso('0099-12-31T23:59:59Z')).toBe('0099-12-31T23:59:59.000Z');
    expect(iso('0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00.000Z');
    // Year 0 is a leap year in the proleptic Gregorian calendar (1900 is not).
    expect(iso('0000-02-29T12:00:00Z')).toBe('0000-02-29T12:00:00.000Z');
    expect(iso('0004-02-29T00:00:00Z')).toBe('0004-02-29T00:00:00.000Z');
    expect(iso('0100-02-29T00:00:00Z')).toBeUndefined();
  });

  it('takes a lowercase t and z, an offset and any fraction', () => {
    expect(iso('2099-12-31t23:59:59z')).toBe('2099-12-31T23:59:59.000Z');
    expect(iso('2099-12-31t23:59:59.123456789+02:30')).toBe('2099-12-31T21:29:59.123Z');
    expect(iso('2099-01-01T00:00:00-23:59')).toBe('2099-01-01T23:59:00.000Z');
  });

  it('reads a leap second (23:59:60 in UTC) as the start of the next second', () => {
    expect(iso('2098-12-31T23:59:60Z')).toBe('2099-01-01T00:00:00.000Z');
    expect(iso('2099-01-01T00:59:60+01:00')).toBe('2099-01-01T00:00:00.000Z');
    expect(iso('2099-01-01T12:00:60Z')).toBeUndefined();
  });

  it('refuses what RFC 3339 does not allow, and days the calendar lacks', () => {
    for (const text of [
      '2099-02-29T00:00:00Z',
      '2099-04-31T00:00:00Z',
      '2099-01-01 00:00:00Z',
      '2099-01-01T24:00:00Z',
      '2099-01-01T00:00:00',
      '2099-01-01T00:00:00+24:00',
      '2099-01-01T00:00:00.Z',
      '99-01-01T00:00:00Z',
      '+002099-01-01T00:00:00Z',
      '2099-1-01T00:00:00Z',
    ])
      expect([text, iso(text)]).toEqual([text, undefined]);
  });
});

describe('dateTimeProblem', () => {
  it('names what is wrong with a date-time, or nothing', () => {
    expect(dateTimeProblem('0099-12-31t23:59:59z')).toBeUndefined();
    expect(dateTimeProblem('2099-12-31')).toMatch(/^must be an RFC 3339 date-time/);
    expect(dateTimeProblem('2099-02-30T00:00:00Z')).toBe('must name a date and time that exist');
    // An instant outside years 0000-9999 in UTC could not be written back as an RFC 3339 date-time.
    expect(dateTimeProblem('0000-01-01T00:00:00+00:01')).toBe(
      'must be an instant from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
    );
    expect(dateTimeProblem('9999-12-31T23:59:59-00:01')).toBe(
      'must be an instant from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
    );
    expect(dateTimeProblem('9999-12-31T23:59:59.999Z')).toBeUndefined();
  });
});
