// LOG_FORMAT=pretty: pino's JSON line, re-read and written as one line for a person at a terminal.
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '35' };
// Shown in the line's head, or not at all (pid and hostname are not in our lines).
const HEAD = new Set(['level', 'time', 'app', 'context', 'msg']);

const shown = (value: unknown): string =>
  typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);

/** `12:00:01.234 INFO  api HttpServer: message key=value ...` (the time is UTC). */
export function prettyLine(colour: boolean): (json: string) => string {
  return (json) => {
    const entry = JSON.parse(json) as Record<string, unknown>;
    const level = entry.level as number;
    const name = (LEVELS[level] ?? String(level)).padEnd(5);
    const head = [
      typeof entry.time === 'string' ? entry.time.slice(11, 23) : '',
      colour ? `\x1b[${COLOURS[level] ?? '0'}m${name}\x1b[0m` : name,
      entry.app,
      entry.context ? `${String(entry.context)}:` : undefined,
      entry.msg,
    ];
    const rest = Object.entries(entry)
      .filter(([key, value]) => !HEAD.has(key) && value !== undefined)
      .map(([key, value]) => `${key}=${shown(value)}`);
    return `${[...head, ...rest].filter((part) => part !== undefined && part !== '').join(' ')}\n`;
  };
}
