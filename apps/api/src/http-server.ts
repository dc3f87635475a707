import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, RequestListener, Server, ServerResponse, STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { INestApplication, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { ApiError } from '@app/errors';
import { armShutdownWatchdog, listenOn } from '@app/observability';
import { InFlightResponses } from './in-flight-responses';

// A slowloris socket is dropped within HEADERS_TIMEOUT_MS plus one check.
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
// Above the 60 s upstream idle timeout of ingress-nginx and cloud load balancers: the proxy, not we, closes an idle
// connection, so it never sends a request on a socket we are closing (docs/reliability.md).
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Emitted on each in-flight response when shutdown starts: a long-lived answer (an event stream) ends itself. */
export const SERVER_DRAINING = 'petstore:draining';
// Node's default of 30 s would triple the timeouts above.
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;
const CLIENT_ERRORS: Record<string, () => ApiError> = {
  HPE_HEADER_OVERFLOW: () => new ApiError('headers_too_large', 'The request line and headers exceed 16 KB'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () => new ApiError('payload_too_large', 'A chunk extension is too large'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new ApiError('request_timeout', 'The request was not received in time'),
};

// Node's own answers to unparseable, oversized or slow requests get the Error body and a request
// id like every other answer (no account yet, so no rate-limit headers).
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
  // As Node does: a half-open socket would let a slow client keep it.
  socket.destroy(err);
}

// Per-request properties are declared in the constructors below, so each request keeps one hidden
// class (docs/internals/decisions/0009-request-state-in-declared-fields.md). Nothing here may shadow an Express getter (query, path, ip).
// The router's matched-route symbol is internal: if a release moves it, the request-shapes e2e fails.
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

// `_eventsCount` is 0 on the prototype until the first listener.
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
    self[ROUTER_PUBLISHED_ERRORS] = undefined; // set on every error answer
  }
}

// Express keeps a `locals` it finds; its own (a null-prototype dictionary) takes V8's slow path.
class ApiResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {
  locals: Record<string, unknown> = { auth: undefined, rateLimit: undefined, policy: undefined };
  override statusCode = 200;
  override statusMessage = undefined as unknown as string;
}

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

// Nest's own server cannot take the timeout options. Owns SIGTERM/SIGINT: drain, close, exit 0.
export async function serve(app: INestApplication, config: AppConfig): Promise<Server> {
  const logger = new Logger('HttpServer');
  await app.init();
  const handler = app.getHttpAdapter().getInstance() as RequestListener;
  const inFlight = new InFlightResponses<ServerResponse>();
  let draining = false;

  const server = createApiServer((req, res) => {
    const slot = inFlight.add(res);
    // 'close' comes once: `on` spares the wrapper `once` makes per request.
    res.on('close', () => {
      inFlight.remove(slot, res);
      // An idle keep-alive socket is closed now rather than after keepAliveTimeout.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    // Keep-alive clients move elsewhere.
    if (draining) res.setHeader('Connection', 'close');
    handler(req, res);
  });
  await listenOn(server, 'PORT', config.port, config.bindAddress);

  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (draining) return;
    draining = true;
    const started = Date.now();
    logger.log({ signal, inFlight: inFlight.size }, 'shutting down: no new connections, draining in-flight requests');
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    for (const res of [...inFlight]) res.emit(SERVER_DRAINING);
    // close() refuses new connections at once and calls back when the last in-flight request is answered.
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    const forced = setTimeout(() => {
      logger.warn({ inFlight: inFlight.size }, 'grace period over: closing the remaining connections');
      server.closeAllConnections();
    }, config.shutdownGraceMs);
    await drained;
    clearTimeout(forced);
    await app.close();
    logger.log({ ms: Date.now() - started }, 'stopped cleanly');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, (s) => void shutdown(s));
  armShutdownWatchdog(config.shutdownGraceMs);
  return server;
}
