import { Injectable } from '@nestjs/common';
import { preparedQuery } from '@app/database';
import { currentTraceparent, withSpan } from '@app/observability';
import { FanOutEventJob, TransactionService } from '@app/events';
import { JobPayload, OnJob } from '@app/jobs';
import { DeliverWebhookJob } from './webhook.jobs';

/**
 * Turns one event into one delivery per subscribed, active webhook of its account, stages
 * their jobs and marks the event fanned out, all in one transaction (until then the lost-job
 * sweep would give the event its job back). The unique (webhook_id, event_id) index makes a
 * repeated fan-out (relay re-enqueue, job retry, sweep) add nothing. Webhooks created after
 * the event do not receive it.
 */
@Injectable()
export class EventFanOutService {
  constructor(private readonly tx: TransactionService) {}

  @OnJob(FanOutEventJob)
  async fanOut({ accountId, eventId }: JobPayload<typeof FanOutEventJob>): Promise<number> {
    return withSpan('event fan-out', 'internal', { 'petstore.event.id': eventId }, () =>
      this.write(accountId, eventId),
    );
  }

  private write(accountId: number, eventId: number): Promise<number> {
    return this.tx.run(async (tx) => {
      // Each delivery keeps this trace, for its retries and the sweep.
      const rows: { id: number }[] = await preparedQuery(
        tx.manager,
        `INSERT INTO webhook_deliveries (webhook_id, account_id, event_id, event_type, traceparent)
         SELECT w.id, e.account_id, e.id, e.type, $3
           FROM events e
           JOIN webhooks w ON w.account_id = e.account_id
          WHERE e.id = $1 AND e.account_id = $2
            AND w.status = 'active' AND e.type = ANY (w.events) AND w.created_at <= e.created_at
         ON CONFLICT (webhook_id, event_id) DO NOTHING
         RETURNING id`,
        [eventId, accountId, currentTraceparent() ?? null],
      );
      for (const { id } of rows) {
        tx.enqueue(DeliverWebhookJob, { accountId, deliveryId: id, attempt: 0 });
      }
      await preparedQuery(
        tx.manager,
        `UPDATE events SET fanned_out = true WHERE id = $1 AND account_id = $2 AND NOT fanned_out`,
        [eventId, accountId],
      );
      return rows.length;
    });
  }
}
