import { getQueueToken } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Queue } from 'bullmq';
import { QueueName } from './queue-names';

/**
 * How long shutdown waits for a queue's Redis handshake (a few ms when Redis is there; it may
 * be away altogether). Well inside the API's 2 s budget for closing the application.
 */
const HANDSHAKE_WAIT_MS = 1_000;

/**
 * BullMQ cannot close a queue whose connection is still in its handshake: the handshake then
 * fails on the closed socket after close() has removed every listener, and the unheard
 * 'error' event crashes the process. The CLI hits it when a command fails before Redis has
 * answered. So shutdown lets each queue finish connecting first; @nestjs/bullmq closes the
 * queues afterwards, in onApplicationShutdown.
 */
@Injectable()
export class QueueHandshake implements BeforeApplicationShutdown {
  constructor(private readonly moduleRef: ModuleRef) {}

  async beforeApplicationShutdown(): Promise<void> {
    const queues = Object.values(QueueName).map((name) =>
      this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(queues.map((q) => q.waitUntilReady())),
      new Promise((resolve) => (timer = setTimeout(resolve, HANDSHAKE_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }
}
