import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { preparedQuery } from '@app/database';
import { currentTraceparent, withSpan } from '@app/observability';
import { FanOutEventJob, FanOutPendingEventsJob } from '@app/events';
import { UnitOfWork, Tx } from '@app/transactions';
import { JobBatcher, JobPayload, JobRun, OnJob } from '@app/jobs';
import { FannedOutDelivery, PendingPageRow, webhookDeliveryQueries } from './webhooks.queries';
import { DeliverWebhookBatchJob } from './webhook.jobs';

/** How long the first fan-out of a batch waits for others (as for message jobs). */
const BATCH_WAIT_MS = 5;
/** A backlog's pages fanned out at once: one page's commit and enqueue overlap the next page's statement. */
const PAGES_IN_FLIGHT = 2;

interface FanOut {
  accountId: number;
  eventId: number;
  /** The fan-out's own span: each delivery of the event continues it, also in its retries and the sweep. */
  traceparent: string | null;
}

// Deliveries are written only for the events the statement itself marks fanned out (their row lock orders two
// fan-outs of one event), so a repeated fan-out adds nothing: a unique index on a partitioned table would have to
// include the partition key. Webhooks created after an event do not receive it. A webhook's deliveries of one batch
// go in one job, in event order: one queue job, claim and read per batch instead of per delivery.
@Injectable()
export class EventFanOutService {
  private readonly batcher: JobBatcher<FanOut, number>;

  private readonly pageSize: number;

  constructor(
    private readonly uow: UnitOfWork,
    config: AppConfig,
  ) {
    this.batcher = new JobBatcher((batch) => this.write(batch), config.jobs.batchSize, BATCH_WAIT_MS);
    this.pageSize = config.jobs.batchSize;
  }

  /** Every event of the account not fanned out yet, a page per statement; settles with the deliveries made. */
  @OnJob(FanOutPendingEventsJob)
  async fanOutPending({ accountId }: JobPayload<typeof FanOutPendingEventsJob>, run: JobRun): Promise<number> {
    // Before the first read: an event recorded after it gets a job of its own, not dropped into this one.
    await run.releaseDeduplication();
    const first = await this.fanOutPage(accountId);
    if (first.events < this.pageSize) return first.deliveries;
    // A backlog: pages from here on PAGES_IN_FLIGHT at a time, each until one comes back short (the rows another
    // page holds are skipped, SKIP LOCKED, and that page fans them out). One failing stops the others after their
    // page, so the job's retry does not meet rows still held by a run that is over.
    const stop = { failed: false };
    const loops = await Promise.allSettled(
      Array.from({ length: PAGES_IN_FLIGHT }, () => this.fanOutPages(accountId, stop)),
    );
    const failure = loops.find((l): l is PromiseRejectedResult => l.status === 'rejected');
    if (failure) throw failure.reason;
    return loops.reduce((made, l) => made + (l as PromiseFulfilledResult<number>).value, first.deliveries);
  }

  private async fanOutPages(accountId: number, stop: { failed: boolean }): Promise<number> {
    let made = 0;
    while (!stop.failed) {
      try {
        const { events, deliveries } = await this.fanOutPage(accountId);
        made += deliveries;
        if (events < this.pageSize) break;
      } catch (err) {
        stop.failed = true;
        throw err;
      }
    }
    return made;
  }

  /** One page: the events it took (a short page: none left but those another page holds) and the deliveries made. */
  private fanOutPage(accountId: number): Promise<{ events: number; deliveries: number }> {
    return this.uow.run(async (tx) => {
      const rows = await preparedQuery<PendingPageRow>(
        tx.manager,
        webhookDeliveryQueries.fanOutPending(accountId, this.pageSize),
      );
      const fanned = rows.filter((r): r is PendingPageRow & FannedOutDelivery => r.id !== null);
      // The batches continue this job's run; each delivery's own span continues its event's trace.
      enqueueBatches(tx, fanned, () => undefined);
      return { events: rows[0].pageEvents, deliveries: fanned.length };
    });
  }

  /** Settles with the number of deliveries this fan-out created (0 when it had been done). */
  @OnJob(FanOutEventJob)
  fanOut({ accountId, eventId }: JobPayload<typeof FanOutEventJob>): Promise<number> {
    return withSpan('event fan-out', 'internal', { 'petstore.event.id': eventId }, () =>
      this.batcher.submit({ accountId, eventId, traceparent: currentTraceparent() ?? null }),
    );
  }

  /** A failure fails each of the batch's jobs, which BullMQ then retries. */
  private async write(batch: FanOut[]): Promise<number[]> {
    const created = new Map<number, number>();
    await this.uow.run(async (tx) => {
      const deliveries = await preparedQuery<FannedOutDelivery>(
        tx.manager,
        webhookDeliveryQueries.fanOut({
          eventIds: batch.map((f) => f.eventId),
          accountIds: batch.map((f) => f.accountId),
          traceparents: batch.map((f) => f.traceparent),
        }),
      );
      for (const d of deliveries) created.set(d.eventId, (created.get(d.eventId) ?? 0) + 1);
      // The batch's job continues its first event's fan-out; each delivery's own span continues its event's.
      enqueueBatches(tx, deliveries, (d) => d.traceparent);
    });
    // The same event twice in one batch (a duplicate job): the count goes to the first.
    return batch.map((f) => {
      const n = created.get(f.eventId) ?? 0;
      created.delete(f.eventId);
      return n;
    });
  }
}

/** One DeliverWebhookBatchJob per webhook of a fan-out statement's deliveries (in event order), traced as `traceOf` its first. */
function enqueueBatches(
  tx: Tx,
  deliveries: FannedOutDelivery[],
  traceOf: (first: FannedOutDelivery) => string | null | undefined,
): void {
  const batches = new Set<number>();
  for (const d of deliveries) {
    if (batches.has(d.webhookId)) continue;
    batches.add(d.webhookId);
    tx.enqueue(
      DeliverWebhookBatchJob,
      { accountId: d.accountId, webhookId: d.webhookId, createdAtUs: d.createdAtUs },
      { traceparent: traceOf(d) },
    );
  }
}
