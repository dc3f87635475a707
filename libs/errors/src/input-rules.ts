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

// RFC 3339 section 5.6 `date-time`: any four-digit year, `T` or `t`, a fraction of any length, `Z`, `z` or an offset.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;
const MINUTE_MS = 60_000;
/** What an answer can write back as an RFC 3339 date-time (`toISOString()` goes to 6-digit years outside it). */
export const DATE_TIME_MIN = '0000-01-01T00:00:00Z';
export const DATE_TIME_MAX = '9999-12-31T23:59:59.999Z';
const MIN_MS = Date.parse(DATE_TIME_MIN);
const MAX_MS = Date.parse(DATE_TIME_MAX);

export const DATE_TIME_FORMAT_MESSAGE =
  'must be an RFC 3339 date-time such as 2099-12-31T23:59:59Z (T or t, Z, z or an offset such as +02:00)';
export const DATE_TIME_CALENDAR_MESSAGE = 'must name a date and time that exist';
export const DATE_TIME_RANGE_MESSAGE = `must be an instant from ${DATE_TIME_MIN} to ${DATE_TIME_MAX}`;

/** For the document: what every `format: date-time` input takes. */
export const DATE_TIME_RULE = `Any RFC 3339 date-time (\`T\` or \`t\`, \`Z\`, \`z\` or an offset, any fraction) naming an instant from ${DATE_TIME_MIN} to ${DATE_TIME_MAX}`;

const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The instant an RFC 3339 date-time names, or undefined when the text is not one or names a day or time that does not
 * exist (`new Date('2027-02-30T00:00:00Z')` silently means March 2). Years 0000-0099 are themselves (Date.UTC would make
 * them 1900-1999); a leap second, 23:59:60 in UTC, is read as the start of the next second.
 */
export function parseDateTime(text: string): Date | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const daysInMonth = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
  const offsetMinutes = m[9] ? (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11])) : 0;
  const offsetOk = !m[9] || (Number(m[10]) <= 23 && Number(m[11]) <= 59);
  if (!daysInMonth || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 60 || !offsetOk)
    return undefined;
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute, Math.min(second, 59), Math.floor(Number(`0${m[7] ?? ''}`) * 1000));
  at.setTime(at.getTime() - offsetMinutes * MINUTE_MS);
  if (second === 60) {
    // Only the last second of a UTC day can be a leap second.
    if (at.getUTCHours() !== 23 || at.getUTCMinutes() !== 59) return undefined;
    at.setUTCMilliseconds(1000);
  }
  return at;
}

/** What is wrong with a date-time input, or undefined: not RFC 3339, a day that does not exist, or beyond 0000-9999. */
export function dateTimeProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !DATE_TIME.test(value)) return DATE_TIME_FORMAT_MESSAGE;
  const at = parseDateTime(value);
  if (!at) return DATE_TIME_CALENDAR_MESSAGE;
  if (at.getTime() < MIN_MS || at.getTime() > MAX_MS) return DATE_TIME_RANGE_MESSAGE;
  return undefined;
}

// 1..2^53-1 spelled out digit by digit, so the document's pattern refuses exactly what the API
// refuses (a bare {1,16} digits would let 2^53 through). Groups, no anchors: for composing.
export const SAFE_ID_TEXT =
  '([1-9][0-9]{0,14}|[1-8][0-9]{15}|900[0-6][0-9]{12}|90070[0-9]{11}|90071[0-8][0-9]{10}|900719[0-8][0-9]{9}|' +
  '9007199[0-1][0-9]{8}|90071992[0-4][0-9]{7}|900719925[0-3][0-9]{6}|9007199254[0-6][0-9]{5}|' +
  '90071992547[0-3][0-9]{4}|9007199254740[0-8][0-9]{2}|90071992547409[0-8][0-9]|900719925474099[0-1])';
