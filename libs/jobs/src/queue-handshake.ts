import { setTimeout as sleep } from 'node:timers/promises';
import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { JobQueues } from './job-queues';

/** Well inside the API's 2 s budget for closing the application. */
const HANDSHAKE_WAIT_MS = 1_000;

// Before @nestjs/bullmq closes the queues: a queue closed mid-handshake crashes the process (an unheard 'error'),
// so each may finish connecting; a connection without an offline queue cannot QUIT while down (close() throws and
// the rest of shutdown is skipped), so each gets one back for the QUIT.
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
      // Every client, not only those down now: one found 'ready' here can lose its socket before the QUIT.
      if (client) client.options.enableOfflineQueue = true;
    }
  }
}
