// Postgres writes an instant before year 1 as `0001-02-29 12:00:00+00 BC`; postgres-date 1.0.7 builds it through
// Date.UTC, which reads years 0-99 as 1900-1999, so Feb 29 of 1 BC (year 0, a leap year; 1900 is not) became Mar 1.
// Such a value is read here through an ISO 8601 string (expanded years), which Date reads as it is.
const BC = /^(\d+)-(\d\d)-(\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?(?::?(\d\d))? BC$/;

/** The instant of a Postgres `timestamptz` text in BC, or undefined for any other text. */
export function parseBcTimestamptz(text: string): Date | undefined {
  const m = BC.exec(text);
  if (!m) return undefined;
  const [, bcYear, month, day, time, offsetHours, offsetMinutes = '00', offsetSeconds] = m;
  const year = 1 - Number(bcYear);
  const yyyy = year === 0 ? '0000' : `-${String(-year).padStart(6, '0')}`;
  const at = new Date(`${yyyy}-${month}-${day}T${time}${offsetHours}:${offsetMinutes}`);
  if (offsetSeconds) at.setTime(at.getTime() - Math.sign(Number(`${offsetHours}1`)) * Number(offsetSeconds) * 1000);
  return at;
}

/** A `timestamptz` parser that reads BC instants through parseBcTimestamptz and the rest through `parse`. */
export const withBcTimestamps =
  (parse: (text: string) => unknown) =>
  (text: string): unknown =>
    (text.endsWith(' BC') && parseBcTimestamptz(text)) || parse(text);
