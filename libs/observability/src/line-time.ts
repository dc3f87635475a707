const MILLIS = Array.from({ length: 1000 }, (_, ms) => String(ms).padStart(3, '0'));

/**
 * pino's `timestamp` option: the text of `pino.stdTimeFunctions.isoTime`, which makes a Date and its ISO text for
 * every line; here the ISO text up to the second is made once a second and the whole text once a millisecond.
 */
export function lineTime(): () => string {
  let second = NaN;
  let head = '';
  let last = NaN;
  let text = '';
  return () => {
    const now = Date.now();
    if (now === last) return text;
    const s = Math.floor(now / 1000);
    if (s !== second) {
      second = s;
      head = `,"time":"${new Date(now).toISOString().slice(0, -4)}`;
    }
    last = now;
    return (text = `${head}${MILLIS[now - s * 1000]}Z"`);
  };
}
