import { Matches } from 'class-validator';

// Controls, bidi overrides and marks (`txt.exe` displayed as `exe.txt`), zero-width characters
// (look-alike names), line separators and the BOM. ZWJ goes too, at the price of emoji sequences.
const UNSAFE_CLASS =
  '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff';
const UNSAFE_NAME_CHARS = new RegExp(`[${UNSAFE_CLASS}]`, 'u');

export const UNSAFE_NAME_MESSAGE = 'must not contain control, bidirectional-override or zero-width characters';

/** The CLI's check; the API's is SafeName. */
export function nameProblem(name: string): string | undefined {
  return UNSAFE_NAME_CHARS.test(name) ? UNSAFE_NAME_MESSAGE : undefined;
}

export const SAFE_NAME_PATTERN = `^[^${UNSAFE_CLASS}]*$`;

export const SafeName = () =>
  Matches(new RegExp(SAFE_NAME_PATTERN, 'u'), {
    message: ({ property }) => `${property} ${UNSAFE_NAME_MESSAGE}`,
  });

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/i;

/** `new Date('2027-02-30T00:00:00Z')` silently means March 2: this refuses it. */
export function parseDateTime(text: string): Date | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59 || !offsetOk)
    return undefined;
  return new Date(text);
}

// 1..2^53-1 spelled out digit by digit, so the document's pattern refuses exactly what the API
// refuses (a bare {1,16} digits would let 2^53 through). Groups, no anchors: for composing.
export const SAFE_ID_TEXT =
  '([1-9][0-9]{0,14}|[1-8][0-9]{15}|900[0-6][0-9]{12}|90070[0-9]{11}|90071[0-8][0-9]{10}|900719[0-8][0-9]{9}|' +
  '9007199[0-1][0-9]{8}|90071992[0-4][0-9]{7}|900719925[0-3][0-9]{6}|9007199254[0-6][0-9]{5}|' +
  '90071992547[0-3][0-9]{4}|9007199254740[0-8][0-9]{2}|90071992547409[0-8][0-9]|900719925474099[0-1])';
