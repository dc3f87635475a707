import { randomUUID } from 'node:crypto';
import { createServer, RequestListener, Server, ServerResponse, STATUS_CODES } from 'node:http';
import { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { INestApplication, Logger } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import fastify, { FastifyHttpOptions, FastifyInstance, FastifyReply } from 'fastify';
import { AppConfig } from '@app/config';
import { ApiError } from '@app/errors';
import { armShutdownWatchdog, listenOn } from '@app/lifecycle';
import { accessLog, observeHttpRequest, rootLogger, traceHttpRequest } from '@app/observability';
import { trustOf } from './gate/proxy-trust-watch';
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
// Route parameters are ids and names: the router's default of 100 characters would answer a long one 414.
const MAX_PARAM_LENGTH = 16 * 1024;
const CLIENT_ERRORS: Record<string, () => ApiError> = {
  HPE_HEADER_OVERFLOW: () => new ApiError('headers_too_large', 'The request line and headers exceed 16 KB'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () => new ApiError('payload_too_large', 'A chunk extension is too large'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new ApiError('request_timeout', 'The request was not received in time'),
};

declare module 'fastify' {
  interface FastifyRequest {
    observed: boolean;
  }
}

export interface ApiServerOptions {
  /** Sees every request before Fastify (the tests' probes). */
  wrap?: (listener: RequestListener) => RequestListener;
}

/**
 * The API's node:http server, made by Fastify through its `serverFactory`: Node's timeouts, Node's own answers to
 * unparseable, oversized or slow requests as Error bodies, and the drain on SIGTERM.
 */
export class ApiHttpServer {
  private readonly inFlight = new InFlightResponses<ServerResponse>();
  // Sockets with an answer under way: a client error on one (a pipelined request) must not write into that answer.
  private readonly answering = new WeakSet<Socket>();
  private draining = false;
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly options: ApiServerOptions = {},
  ) {}

  /** The Fastify adapter Nest runs on, with this server. */
  adapter(): FastifyAdapter {
    const options: FastifyHttpOptions<Server> = {
      serverFactory: (handler) => (this.server = this.create(handler)),
      clientErrorHandler: (err, socket) => this.answerClientError(err, socket),
      // The proxy trust watch compiles the same function.
      trustProxy: trustOf(this.config.trustProxy),
      bodyLimit: this.config.bodyLimitBytes,
      // As clients met the API on Express: a path in any case, a trailing slash allowed.
      routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
      // The access log writes our own line and request id (libs/observability).
      logger: false,
      requestIdHeader: false,
      // The router's refusals (a malformed URL) go to Nest's error handler, and so get the Error body.
      frameworkErrors: (error, _request, reply) => void (reply as FastifyReply).send(error),
    };
    const instance = fastify(options);
    // Before Nest's own request hooks (CORS, security headers), so every answer has its id, line, metric and span.
    const log = accessLog(rootLogger(this.config, 'api'), observeHttpRequest);
    // Once a request: a route that hands it on to the not-found handler runs the request hooks again.
    instance.decorateRequest('observed', false);
    instance.addHook('onRequest', (request, reply, done) => {
      if (request.observed) return done();
      request.observed = true;
      const route = request.routeOptions.url;
      // On the reply, where the API sets its other headers.
      reply.header('X-Request-Id', log(request.raw, reply.raw, route));
      traceHttpRequest(request.raw, reply.raw, route, done);
    });
    return new FastifyAdapter(instance);
  }

  private create(handler: RequestListener): Server {
    const listener = this.options.wrap ? this.options.wrap(handler) : handler;
    const server = createServer(
      {
        headersTimeout: HEADERS_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
      },
      (req, res) => {
        const slot = this.inFlight.add(res);
        const socket = req.socket;
        this.answering.add(socket);
        // 'close' comes once: `on` spares the wrapper `once` makes per request.
        res.on('close', () => {
          this.inFlight.remove(slot, res);
          this.answering.delete(socket);
          // An idle keep-alive socket is closed now rather than after keepAliveTimeout.
          if (this.draining) setImmediate(() => server.closeIdleConnections());
        });
        // Keep-alive clients move elsewhere.
        if (this.draining) res.setHeader('Connection', 'close');
        listener(req, res);
      },
    );
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    return server;
  }

  // Node's own answers to unparseable, oversized or slow requests get the Error body and a request
  // id like every other answer (no account yet, so no rate-limit headers).
  answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    const inResponse = socket instanceof Socket && this.answering.has(socket);
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

  /** Initialises the app and listens on `port` (0: a free one); the server Fastify had made. */
  async listen(app: INestApplication, port: number, host?: string): Promise<Server> {
    await app.init();
    await (app.getHttpAdapter().getInstance() as FastifyInstance).ready();
    await listenOn(this.server!, 'PORT', port, host);
    return this.server!;
  }

  // Owns SIGTERM/SIGINT: drain, close, exit 0.
  async serve(app: INestApplication): Promise<Server> {
    const logger = new Logger('HttpServer');
    const server = await this.listen(app, this.config.port, this.config.bindAddress);
    const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
      if (this.draining) return;
      this.draining = true;
      const started = Date.now();
      logger.log(
        { signal, inFlight: this.inFlight.size },
        'shutting down: no new connections, draining in-flight requests',
      );
      for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      for (const res of [...this.inFlight]) res.emit(SERVER_DRAINING);
      // close() refuses new connections at once and calls back when the last in-flight request is answered.
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      const forced = setTimeout(() => {
        logger.warn({ inFlight: this.inFlight.size }, 'grace period over: closing the remaining connections');
        server.closeAllConnections();
      }, this.config.shutdownGraceMs);
      await drained;
      clearTimeout(forced);
      await app.close();
      logger.log({ ms: Date.now() - started }, 'stopped cleanly');
      process.exit(0);
    };
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, (s) => void shutdown(s));
    armShutdownWatchdog(this.config.shutdownGraceMs);
    return server;
  }
}
