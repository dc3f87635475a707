import { mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { isatty } from 'node:tty';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { AppConfig } from '@app/config';
import { lineBatch } from './line-batch';
import { lineTime } from './line-time';
import { prettyLine } from './pretty-log';
import { newRequestId } from '@app/ids';
import { activeSpanIds, tracingEnabled } from './tracing';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
// The `pst_` prefix of an API key, in any case.
const KEY_SHAPED = /pst_[0-9A-Za-z]+/gi;
// The prefix in any spelling, or 32+ letters and digits beyond hex (hex trace ids stay allowed).
const KEY_LIKE_ID = /pst[._-]|[0-9A-Za-z]*[g-zG-Z][0-9A-Za-z]*/gi;

export function redactKeys(text: string): string {
  // Most paths have no underscore, so no key: a scan for it is cheaper than the regular expression's replace.
  return text.includes('_') ? text.replace(KEY_SHAPED, 'pst_[redacted]') : text;
}

function looksLikeKey(id: string): boolean {
  return (id.match(KEY_LIKE_ID) ?? []).some((run) => run.length >= 32 || /^pst[._-]$/i.test(run));
}

/** Percent-decoded first (a few rounds) so `pst%5F...` is redacted like `pst_...`. */
export function loggablePath(url: string): string {
  const query = url.indexOf('?');
  let path = query < 0 ? url : url.slice(0, query);
  for (let round = 0; round < 3 && path.includes('%'); round++) {
    try {
      const decoded = decodeURIComponent(path);
      if (decoded === path) break;
      path = decoded;
    } catch {
      break;
    }
  }
  return redactKeys(path);
}

// A key sent as the id (mixed-up headers, a probe of our redaction) would be echoed and logged.
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) && !looksLikeKey(given) ? given : newRequestId();
}

const roots = new Map<string, Logger>();

// Opened synchronously: an asynchronous destination is not ready for pino's flush at exit when
// a process fails within its first milliseconds, and that flush then throws instead of writing.
function openLogFile(file: string | undefined): number {
  if (!file) return 1;
  mkdirSync(dirname(file), { recursive: true });
  return openSync(file, 'a');
}

/** The longest a line waits in the write buffer; pino writes what is left when the process exits. */
export const LOG_FLUSH_MS = 100;
/** Characters of lines handed to the file in one write (at most LOG_FLUSH_MS after the first of them). */
export const LOG_BATCH_CHARS = 16_000;

// Lines go out LOG_BATCH_CHARS at a time (and at least every LOG_FLUSH_MS): a write per line took a fifth of the
// API's CPU at 1,000 requests/s (docs/internals/decisions/0012-access-log-lines.md).
export function rootLogger(config: AppConfig, app: string): Logger {
  let logger = roots.get(app);
  if (!logger) {
    const fd = openLogFile(config.logFile);
    const written = pino(
      {
        level: config.logLevel,
        base: { app },
        timestamp: lineTime(),
        serializers: { err: (err: Error) => ({ type: err.name, message: err.message }) },
        // Tracing starts before the first logger (main.ts): with it off, lines cost nothing more.
        ...(tracingEnabled() && { mixin: () => activeSpanIds() ?? {} }),
        ...(config.logFormat === 'pretty' && { hooks: { streamWrite: prettyLine(isatty(fd)) } }),
      },
      // sonic-boom keeps the minLength it had: the reverted batching that lost throughput ran it with none.
      lineBatch(pino.destination({ dest: fd, sync: false, minLength: 4096 }), LOG_BATCH_CHARS),
    );
    setInterval(() => written.flush(() => undefined), LOG_FLUSH_MS).unref();
    roots.set(app, (logger = written));
  }
  return logger;
}

// No headers or query string, so the Authorization header never reaches a log line; no child
// logger per request (docs/internals/decisions/0012-access-log-lines.md).
/** Called once a response is done (sent or abandoned), health and metrics paths included; `route` is its template. */
export type RequestDone = (
  req: IncomingMessage,
  res: ServerResponse,
  route: string | undefined,
  seconds: number,
) => void;

interface AccessLine {
  reqId: string;
  method?: string;
  path: string;
  status: number;
  ms: number;
  aborted?: true;
}

// One 'close' listener per request, which `done` shares (a listener costs each request its wrapper and removal).
// Returns the request's id for the caller to answer in X-Request-Id.
export function accessLog(logger: Logger, done?: RequestDone) {
  return (req: IncomingMessage, res: ServerResponse, route: string | undefined): string => {
    const id = requestId(req);
    const url = req.url ?? '';
    const quiet = QUIET_PATHS.test(url);
    const started = performance.now();
    // 'close' comes once per response: `on` spares the wrapper `once` makes.
    res.on('close', () => {
      const ms = performance.now() - started;
      done?.(req, res, route, ms / 1000);
      if (quiet) return;
      const line: AccessLine = {
        reqId: id,
        method: req.method,
        path: loggablePath(url),
        status: res.statusCode,
        ms: Math.round(ms),
      };
      if (!res.writableFinished) line.aborted = true;
      if (res.statusCode >= 500 && !isShed(res)) logger.error(line, 'request failed');
      else logger.info(line, 'request completed');
    });
    return id;
  };
}

const QUIET_PATHS = /^\/(health|metrics)/;

// A 503 that says when to retry is an answer the API chose (a spent lookup budget, a backing service
// away; each logs its own warning): an error line per request would flood the log when it is busiest.
const isShed = (res: ServerResponse) => res.statusCode === 503 && res.hasHeader('Retry-After');

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

// A line per route and per module at each start: detail for LOG_LEVEL=debug, not the start-up story.
const BOOT_DETAIL = new Set(['RoutesResolver', 'RouterExplorer', 'InstanceLoader']);

// Nest appends the logger's context as the last argument; anything else it passes (a stack
// trace) is dropped: stacks stay out of the logs.
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  log(message: unknown, ...rest: unknown[]): void {
    this.write(BOOT_DETAIL.has(rest[rest.length - 1] as string) ? 'debug' : 'info', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    if (message instanceof Error) {
      this.pino[level]({ context, err: { type: message.name, message: message.message } }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ context, ...message }, typeof rest[0] === 'string' ? rest[0] : undefined);
    } else this.pino[level]({ context }, String(message));
  }
}
