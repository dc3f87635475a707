import { Injectable } from '@nestjs/common';
import { preparedQuery } from '@app/database';
import { currentTraceparent } from '@app/observability';
import { UnitOfWork, UnitOfWorkExtension, UnitOfWorkTx } from '@app/jobs';
import { DomainEventEntity } from './domain-event.entity';
import { NewDomainEvent } from './domain-event-types';
import { FanOutEventJob } from './event.jobs';
import { LiveEvents } from './live-events';
import { PublicEvent, toPublicEvent } from './views';

export interface DomainEventEmitter {
  emit(event: NewDomainEvent): Promise<void>;
  /** At most one event per resource: a resource's sequence counter cannot move twice in one statement. */
  emitMany(events: (NewDomainEvent & { traceparent?: string | null })[]): Promise<void>;
}

export type Tx = UnitOfWorkTx & DomainEventEmitter;

// The counter upsert row-locks (account, resource): concurrent emitters take 1, 2, ... in turn. An event no active
// webhook subscribes to is born fanned out, without a fan-out job: most events have no subscriber.
const EMIT_SQL = `WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::text[])
      WITH ORDINALITY AS i(account_id, type, resource_type, resource_id, data, traceparent, n)),
  seq AS (
    INSERT INTO event_sequences AS s (account_id, resource_type, resource_id, last)
    SELECT account_id, resource_type, resource_id, 1 FROM input ORDER BY n
    ON CONFLICT (account_id, resource_type, resource_id) DO UPDATE SET last = s.last + 1
    RETURNING account_id, resource_type, resource_id, last),
  inserted AS (
    INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out, traceparent)
    SELECT i.account_id, i.type, i.resource_type, i.resource_id, seq.last, i.data,
           NOT EXISTS (SELECT 1 FROM webhooks w
                        WHERE w.account_id = i.account_id AND w.status = 'active' AND i.type = ANY (w.events)),
           i.traceparent
      FROM input i JOIN seq USING (account_id, resource_type, resource_id)
     ORDER BY i.n
    RETURNING id, account_id, type, resource_type, resource_id, sequence, data, created_at, fanned_out, traceparent)
  SELECT id, account_id AS "accountId", type, resource_type AS "resourceType", resource_id AS "resourceId", sequence,
         data, created_at AS "createdAt", fanned_out AS "fannedOut", traceparent
    FROM inserted ORDER BY id`;

/** Every feature's unit of work: libs/jobs' UnitOfWork, with `tx.emit` recording domain events in it. */
@Injectable()
export class DomainUnitOfWork {
  private readonly events: UnitOfWorkExtension<DomainEventEmitter> = {
    open: (tx) => {
      const emitted: (PublicEvent & { accountId: number })[] = [];
      const emitMany: DomainEventEmitter['emitMany'] = async (events) => {
        if (!events.length) return;
        const columns: unknown[][] = [[], [], [], [], [], []];
        for (const e of events) {
          // The event's delivery continues the trace that emitted it, also when the sweep re-enqueues it.
          const traceparent = e.traceparent ?? currentTraceparent() ?? null;
          [e.accountId, e.type, e.resourceType, String(e.resourceId), JSON.stringify(e.data), traceparent].forEach(
            (v, i) => columns[i].push(v),
          );
        }
        const rows = await preparedQuery<DomainEventEntity>(tx.manager, EMIT_SQL, columns);
        for (const row of rows) {
          emitted.push({ ...toPublicEvent(row), accountId: row.accountId });
          if (!row.fannedOut)
            tx.enqueue(FanOutEventJob, { accountId: row.accountId, eventId: row.id }, { traceparent: row.traceparent });
        }
      };
      return {
        members: { emit: (event) => emitMany([event]), emitMany },
        // Not awaited: a request does not wait on the streams; the events are committed, and a stream resumes from them.
        afterCommit: () => {
          if (emitted.length) void this.live.publish(emitted);
        },
      };
    },
  };

  constructor(
    private readonly uow: UnitOfWork,
    private readonly live: LiveEvents,
  ) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.uow.run(work, this.events);
  }
}
