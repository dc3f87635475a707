import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { AppConfig } from '@app/config';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** API-key-shaped text (the `pst_` prefix of libs/auth's key format): kept out of logs. */
const KEY_SHAPED = /pst_[0-9A-Za-z]+/g;

export function redactKeys(text: string): string {
  return text.replace(KEY_SHAPED, 'pst_[redacted]');
}

/**
 * The caller's X-Request-Id when it is sane, else a fresh one; echoed on the response.
 * A key sent as the id (a client mixing up headers) would be logged on every line: refused.
 */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) && redactKeys(given) === given ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

const roots = new Map<string, Logger>();

/**
 * One JSON logger per app and process. Writes are asynchronous (no sync I/O per request)
 * and flushed on exit. Errors are logged as class and message only: no stack, no SQL.
 */
export function rootLogger(config: AppConfig, app: string): Logger {
  let logger = roots.get(app);
  if (!logger) {
    logger = pino(
      {
        level: config.logLevel,
        base: { app },
        timestamp: pino.stdTimeFunctions.isoTime,
        serializers: { err: (err: Error) => ({ type: err.name, message: err.message }) },
      },
      pino.destination({ dest: config.logFile ?? 1, sync: false, mkdir: true }),
    );
    roots.set(app, logger);
  }
  return logger;
}

/**
 * Request logging. Lines carry the request id, method, path and status, and deliberately no
 * headers or query string: the Authorization header never reaches a log line.
 */
export function httpLogger(config: AppConfig, app: string) {
  return pinoHttp({
    logger: rootLogger(config, app),
    genReqId: requestId,
    quietReqLogger: true,
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        // A key pasted into a path (GET /keys/pst_...) must not reach the log either.
        path: redactKeys(req.url.split('?')[0]),
      }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
      err: (err: Error) => ({ type: err.name, message: err.message }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (req) => /^\/(health|metrics)/.test(req.url ?? '') },
  });
}
