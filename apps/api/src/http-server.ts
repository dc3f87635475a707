import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, RequestListener, Server, ServerResponse, STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { INestApplication, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { ApiError } from '@app/errors';
import { armShutdownWatchdog } from '@app/observability';

/** Bounds on slow clients: a slowloris socket is dropped within HEADERS_TIMEOUT_MS plus one check. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
// Node checks the two timeouts above on this interval (default 30 s, which would triple them).
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;
/** Requests Node refuses before the app sees them, by Node's error code. */
const CLIENT_ERRORS: Record<string, () => ApiError> = {
  HPE_HEADER_OVERFLOW: () => new ApiError('headers_too_large', 'The request line and headers exceed 16 KB'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () => new ApiError('payload_too_large', 'A chunk extension is too large'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new ApiError('request_timeout', 'The request was not received in time'),
};

/**
 * Node answers an unparseable, oversized or too-slow request itself, with a bare status line.
 * This gives those answers the Error body and a request id like every other answer (there is
 * no account yet, so no rate-limit headers), and closes the connection as Node does.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const inResponse = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage?.headersSent;
  if (socket.writable && !inResponse && err.code !== 'ECONNRESET') {
    const error =
      CLIENT_ERRORS[err.code ?? '']?.() ?? new ApiError('malformed_request', 'The HTTP request is malformed');
    const body = JSON.stringify(error.toBody());
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        `X-Request-Id: ${randomUUID()}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  // As Node does: the small answer is already in the kernel; a half-open socket would let a
  // slow client keep it.
  socket.destroy(err);
}

// Express re-prototypes every request and response and then adds properties, which gives each
// request new hidden classes (docs/internals/decisions.md). Declaring those properties in the
// constructor keeps one hidden class per stage. Nothing here may shadow an Express getter (query, path, ip, ...).

/**
 * The symbol under which Express's router (2.3) records the matched route on every request. It
 * is internal to the router, so it is looked up in the copy Nest's Express uses; if a router
 * release moves it, this is undefined and the e2e test on request shapes fails.
 */
const ROUTER_MATCHED_ROUTE: symbol | undefined = (() => {
  try {
    const fromNest = createRequire(createRequire(__filename).resolve('@nestjs/platform-express'));
    const fromExpress = createRequire(fromNest.resolve('express'));
    return (fromExpress('router/lib/symbols') as { matchedRoute?: symbol }).matchedRoute;
  } catch {
    return undefined;
  }
})();

const ROUTER_PUBLISHED_ERRORS = Symbol.for('router.tracing.publishedErrors');

/** Express, its router and body parsers set these on every request; the first listener sets `_eventsCount` (0 on the prototype). */
class ApiRequest extends IncomingMessage {
  _eventsCount = 0;
  res: unknown = undefined;
  next: unknown = undefined;
  baseUrl: unknown = undefined;
  originalUrl: unknown = undefined;
  _parsedUrl: unknown = undefined;
  params: unknown = undefined;
  route: unknown = undefined;
  body: unknown = undefined;

  constructor(socket: Socket) {
    super(socket);
    const self = this as unknown as Record<symbol, unknown>;
    if (ROUTER_MATCHED_ROUTE) self[ROUTER_MATCHED_ROUTE] = undefined;
    self[ROUTER_PUBLISHED_ERRORS] = undefined; // set on every error answer (401, 404, 429, ...)
  }
}

/**
 * The status fields are otherwise defaults on the prototype, made own by the first write. Express
 * keeps a `locals` it finds; this one has the request gate's fields declared, where Express's own
 * (a null-prototype dictionary) takes V8's slow path for every property added.
 */
class ApiResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {
  locals: Record<string, unknown> = { auth: undefined, rateLimit: undefined, policy: undefined };
  override statusCode = 200;
  override statusMessage = undefined as unknown as string;
}

/** The API's HTTP server: the request classes above, bounds on slow clients, Error bodies for what Node refuses. */
export function createApiServer(listener: RequestListener): Server {
  const server = createServer(
    {
      IncomingMessage: ApiRequest,
      ServerResponse: ApiResponse,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    listener,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', answerClientError);
  return server;
}

/**
 * Serves the initialised Nest app on our own HTTP server (Nest's cannot take the timeout
 * options) and owns SIGTERM/SIGINT: stop accepting, drain, then close the app and exit 0.
 */
export async function serve(app: INestApplication, config: AppConfig): Promise<Server> {
  const logger = new Logger('HttpServer');
  await app.init();
  const handler = app.getHttpAdapter().getInstance() as RequestListener;
  const inFlight = new Set<ServerResponse>();
  let draining = false;

  const server = createApiServer((req, res) => {
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      // A keep-alive socket whose answer went out before the drain began is idle now: close it
      // rather than wait keepAliveTimeout for it.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    // While draining, every answer closes its connection so keep-alive clients move elsewhere.
    if (draining) res.setHeader('Connection', 'close');
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`cannot listen on PORT ${config.port}: ${err.message}`)));
    server.listen(config.port, resolve);
  });

  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (draining) return;
    draining = true;
    const started = Date.now();
    logger.log({ signal, inFlight: inFlight.size }, 'shutting down: no new connections, draining in-flight requests');
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    // close() refuses new connections at once and closes idle keep-alive sockets; it calls
    // back when the last in-flight request has been answered.
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    const forced = setTimeout(() => {
      logger.warn({ inFlight: inFlight.size }, 'grace period over: closing the remaining connections');
      server.closeAllConnections();
    }, config.shutdownGraceMs);
    await drained;
    clearTimeout(forced);
    await app.close();
    logger.log({ ms: Date.now() - started }, 'shut down');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, (s) => void shutdown(s));
  armShutdownWatchdog(config.shutdownGraceMs);
  return server;
}
