import { createServer, RequestListener, Server, ServerResponse } from 'node:http';
import { INestApplication, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';

/** Bounds on slow clients: a slowloris socket is dropped within HEADERS_TIMEOUT_MS plus one check. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
// Node checks the two timeouts above on this interval (default 30 s, which would triple them).
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;
/** After the drain, closing pools and clients gets this long before the process gives up. */
const CLOSE_BUDGET_MS = 2_000;

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

  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    (req, res) => {
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
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, resolve);
  });

  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (draining) return;
    draining = true;
    const started = Date.now();
    logger.log({ signal, inFlight: inFlight.size }, 'shutting down: no new connections, draining in-flight requests');
    setTimeout(() => process.exit(1), config.shutdownGraceMs + CLOSE_BUDGET_MS).unref();
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
  return server;
}
