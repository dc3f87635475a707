import { SAFE_ID_TEXT } from './input-rules';

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
