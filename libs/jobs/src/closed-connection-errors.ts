import { RedisConnection } from 'bullmq';

let installed = false;

/**
 * Drops the error a BullMQ connection reports after it was closed, when nobody listens any more.
 *
 * BullMQ (5.x, taskforcesh/bullmq#3546) re-emits a failed connection start-up as an 'error' event
 * on the connection. Closing a queue or worker whose connection is still starting (a SIGTERM in
 * the first milliseconds, a scrape racing a restart, Redis slow to answer INFO) removes every
 * listener first, so that late 'error' has none and Node turns it into an uncaught exception:
 * the process dies with a stack trace instead of finishing its shutdown. A closed connection's
 * error tells nobody anything, so it is dropped; every other error still goes to its listeners.
 * The only place this project reaches into BullMQ's connection class.
 */
export function dropErrorsOfClosedConnections(): void {
  if (installed) return;
  installed = true;
  const emit = RedisConnection.prototype.emit;
  RedisConnection.prototype.emit = function (this: RedisConnection, event: string | symbol, ...args: unknown[]) {
    if (event === 'error' && this.status === 'closed' && this.listenerCount('error') === 0) return false;
    return emit.call(this, event, ...args);
  };
}
