import { Injectable } from '@nestjs/common';
import { preparedQuery } from '@app/database';
import { currentTraceparent } from '@app/observability';
import { UnitOfWork, UnitOfWorkExtension, UnitOfWorkTx } from '@app/jobs';
import { DomainEventEntity } from './domain-event.entity';
import { eventQueries } from './events.queries';
import { NewDomainEvent } from './domain-event-types';
import { FanOutPendingEventsJob } from './event.jobs';
import { LiveEvent, LiveEvents } from './live-events';
import { toPublicEvent } from './views';

export interface DomainEventEmitter {
  emit(event: NewDomainEvent): Promise<void>;
  /** At most one event per resource: a resource's sequence counter cannot move twice in one statement. */
  emitMany(events: (NewDomainEvent & { traceparent?: string | null })[]): Promise<void>;
}

export type Tx = UnitOfWorkTx & DomainEventEmitter;

/** Every feature's unit of work: libs/jobs' UnitOfWork, with `tx.emit` recording domain events in it. */
@Injectable()
export class DomainUnitOfWork {
  private readonly events: UnitOfWorkExtension<DomainEventEmitter> = {
    open: (tx) => {
      const emitted: LiveEvent[] = [];
      const emitMany: DomainEventEmitter['emitMany'] = async (events) => {
        if (!events.length) return;
        // The event's delivery continues the trace that emitted it, also when the sweep re-enqueues it.
        const traced = events.map((e) => ({ ...e, traceparent: e.traceparent ?? currentTraceparent() ?? null }));
        const rows = await preparedQuery<DomainEventEntity>(tx.manager, eventQueries.record(traced));
        // One fan-out job per account takes all of its events (as it does those of other units recorded meanwhile).
        const fanOut = new Map<number, DomainEventEntity>();
        for (const row of rows) {
          emitted.push({ ...toPublicEvent(row), accountId: row.accountId, adminOnly: row.adminOnly });
          if (!row.fannedOut && !fanOut.has(row.accountId)) fanOut.set(row.accountId, row);
        }
        for (const row of fanOut.values())
          tx.enqueue(
            FanOutPendingEventsJob,
            { accountId: row.accountId, eventId: row.id },
            { traceparent: row.traceparent },
          );
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
