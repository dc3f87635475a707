import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { OutboxService } from './outbox.service';

/**
 * Moves outbox rows the API could not enqueue (Redis down, process killed between commit
 * and enqueue) into BullMQ. Safe with several workers: rows are claimed with SKIP LOCKED.
 */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelayService.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private failing = false;

  constructor(
    private readonly outbox: OutboxService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.drain().finally(() => (this.running = undefined));
    }, this.config.outbox.relayIntervalMs);
  }

  /**
   * Before the queues close (onApplicationShutdown): a queue's close() can reject (a cluster
   * mid-failover), and Nest then skips every hook after it; a relay stopped there kept working.
   */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Relays until the backlog is empty, then waits for the next tick. */
  async drain(): Promise<void> {
    try {
      let moved: number;
      do {
        moved = await this.outbox.relayOnce();
        if (moved) this.logger.log({ moved }, 'outbox rows relayed');
      } while (moved > 0);
      if (this.failing) this.logger.warn('outbox relay recovered');
      this.failing = false;
    } catch (err) {
      // Logged once per outage; the rows stay put and the next tick tries again.
      if (!this.failing) this.logger.error({ err: { message: (err as Error).message } }, 'outbox relay failing');
      this.failing = true;
    }
  }
}
