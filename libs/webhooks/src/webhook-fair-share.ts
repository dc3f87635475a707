import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { LeasedSlots } from '@app/redis';
import { preparedQuery } from '@app/database';
import { webhookDeliveryQueries } from './webhooks.queries';

/** How long a delivery over its account's share waits before it is tried again, plus as much jitter. */
export const FAIR_SHARE_RETRY_MS = 1_000;
/** How long one answer to "is another account waiting?" is reused. */
const CONTENTION_TTL_MS = 500;
const NO_CAP = 2 ** 31;

// While other accounts have deliveries due, a job beyond WEBHOOK_ACCOUNT_CONCURRENCY waits about a second, so the
// workers reach other accounts' jobs behind a big backlog of one slow receiver; one account alone keeps the queue.
@Injectable()
export class WebhookFairShare {
  /** Per account over its share: whether another account was waiting, and until when that holds. */
  private readonly contention = new Map<number, { until: number; waiting: Promise<boolean> }>();

  constructor(
    private readonly slots: LeasedSlots,
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** False when the account is over its share and another account waits. */
  async acquire(accountId: number, jobId: string): Promise<boolean> {
    if (await this.take(accountId, jobId, this.config.webhooks.accountConcurrency)) return true;
    if (await this.othersWaiting(accountId)) return false;
    return this.take(accountId, jobId, NO_CAP);
  }

  async release(accountId: number, jobId: string): Promise<void> {
    await this.slots.release([this.slotsKey(accountId)], jobId);
  }

  private async take(accountId: number, jobId: string, cap: number): Promise<boolean> {
    // A delivery cannot outlive its timeout by much; the lock period covers the bookkeeping.
    const leaseMs = this.config.webhooks.timeoutMs + this.config.jobs.lockMs;
    return (await this.slots.take({ sets: [this.slotsKey(accountId)], caps: [cap], member: jobId, leaseMs })) === -1;
  }

  /** First attempts and retries whose time has come, asked at most every CONTENTION_TTL_MS per account. */
  private othersWaiting(accountId: number): Promise<boolean> {
    const now = Date.now();
    const known = this.contention.get(accountId);
    if (known && known.until > now) return known.waiting;
    for (const [id, entry] of this.contention) if (entry.until <= now) this.contention.delete(id);
    const waiting = preparedQuery(this.dataSource, webhookDeliveryQueries.othersWaiting(accountId)).then(
      (rows: unknown[]) => rows.length > 0,
    );
    this.contention.set(accountId, { until: now + CONTENTION_TTL_MS, waiting });
    return waiting;
  }

  // A worker killed mid-delivery cannot hold a slot for ever: each is a lease.
  private slotsKey(accountId: number): string {
    return `${this.config.redisNamespace}:webhooks:in-flight:{${accountId}}`;
  }

  retryAt(): number {
    return Date.now() + FAIR_SHARE_RETRY_MS + Math.floor(Math.random() * FAIR_SHARE_RETRY_MS);
  }
}
