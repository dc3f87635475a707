import { setTimeout as sleep } from 'node:timers/promises';
import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { JobQueues } from './job-queues';

/**
 * How long shutdown waits for a queue's Redis handshake (a few ms when Redis is there; it may
 * be away altogether). Well inside the API's 2 s budget for closing the application.
 */
const HANDSHAKE_WAIT_MS = 1_000;

/**
 * Prepares the queues for @nestjs/bullmq, which closes them in onApplicationShutdown:
 * - BullMQ cannot close a queue whose connection is still in its handshake: the handshake then
 *   fails on the closed socket after close() has removed every listener, and the unheard
 *   'error' event crashes the process (the CLI hit it when a command failed before Redis had
 *   answered). So each queue may first finish connecting.
 * - A queue whose connection is down (Redis away) cannot QUIT: without an offline queue ioredis
 *   refuses the command, BullMQ's close() throws, and the rest of the application's shutdown
 *   is skipped. The connections get their offline queue back for the QUIT alone.
 */
@Injectable()
export class QueueHandshake implements BeforeApplicationShutdown {
  constructor(private readonly queues: JobQueues) {}

  async beforeApplicationShutdown(): Promise<void> {
    // Each queue on its own clock: one stuck handshake must not keep the others from their fix.
    const clients = await Promise.all(
      this.queues.all().map((q) =>
        Promise.race([
          q.waitUntilReady().then(
            () => q.backend.client,
            () => undefined,
          ),
          sleep(HANDSHAKE_WAIT_MS, undefined, { ref: false }),
        ]),
      ),
    );
    for (const client of clients) {
      // With an offline queue, ioredis answers QUIT itself on a connection that is down. Every
      // client, not only those down now: one found 'ready' here can lose its socket before the
      // QUIT (CI: Redis cut just before close), and then threw.
      if (client) client.options.enableOfflineQueue = true;
    }
  }
}
