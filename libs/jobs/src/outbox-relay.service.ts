import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { preparedQuery, TransactionRunner } from '@app/database';
import { within } from './within';
import { JobEnqueuer } from './job-enqueuer.service';
import { JobQueues } from './job-queues';
import { outboxQueries, OutboxRow } from './jobs.queries';
import { RedisMemoryWatch } from './redis-memory-watch.service';

/** How long a relay pass holds its claimed rows while Redis takes the jobs. */
const RELAY_ENQUEUE_TIMEOUT_MS = 5_000;

@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelayService.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private failing = false;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly queues: JobQueues,
    private readonly enqueuer: JobEnqueuer,
    private readonly redisMemory: RedisMemoryWatch,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.drain().finally(() => (this.running = undefined));
    }, this.config.outbox.relayIntervalMs);
  }

  /** Before the queues close: a queue's close() can reject (a cluster mid-failover), and Nest skips later hooks. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  async drain(): Promise<void> {
    try {
      let moved: number;
      do {
        moved = await this.relayOnce();
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

  // Rows past the grace period, claimed (SKIP LOCKED), enqueued and deleted in one transaction: rolled back if Redis
  // refuses or is late (a late enqueue is harmless: job ids are deterministic).
  async relayOnce(batchSize = 500): Promise<number> {
    await this.assertQueuesConnected();
    // A pass pushes up to batchSize jobs at once: ask Redis first, not the last periodic check.
    await this.redisMemory.check();
    if (this.redisMemory.full) return 0;
    return this.transactions.run(async (manager) => {
      const rows = await preparedQuery<OutboxRow>(
        manager,
        outboxQueries.claimForRelay(this.config.outbox.relayGraceMs, batchSize),
      );
      if (!rows.length) return 0;
      await within(this.enqueuer.enqueue(rows), RELAY_ENQUEUE_TIMEOUT_MS, 'outbox relay');
      await preparedQuery(manager, outboxQueries.delete(rows.map((r) => r.id)));
      return rows.length;
    });
  }

  /** The worker's queue connections hold commands while Redis is away: each pass would pile a batch into them. */
  private async assertQueuesConnected(): Promise<void> {
    const clients = await within(
      Promise.all(this.queues.all().map((q) => q.backend.client)),
      RELAY_ENQUEUE_TIMEOUT_MS,
      'queue connection',
    );
    if (clients.some((c) => c.status !== 'ready')) throw new Error('Redis is not connected');
  }
}
