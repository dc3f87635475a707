import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { preparedQuery, TransactionRunner } from '@app/database';
import { currentTraceparent, withSpan } from '@app/observability';
import { JobDefinition, OutboxDispatch, OutboxRow, OutboxStaging, StagedJob, stagedJob, StageOptions } from '@app/jobs';
import { DomainEventEntity } from './domain-event.entity';
import { NewDomainEvent } from './domain-event-types';
import { FanOutEventJob } from './event.jobs';
import { LiveEvents } from './live-events';
import { PublicEvent, toPublicEvent } from './views';

export interface Tx {
  manager: EntityManager;
  /** The job continues `options.traceparent` if given, else the active trace. */
  enqueue<P extends object>(job: JobDefinition<P>, payload: P, options?: StageOptions): void;
  emit(event: NewDomainEvent): Promise<void>;
  /** At most one event per resource: a resource's sequence counter cannot move twice in one statement. */
  emitMany(events: (NewDomainEvent & { traceparent?: string | null })[]): Promise<void>;
}

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

/** The one place that records domain events; staged jobs are dispatched to BullMQ after commit. */
@Injectable()
export class TransactionService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly staging: OutboxStaging,
    private readonly dispatcher: OutboxDispatch,
    private readonly live: LiveEvents,
  ) {}

  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const jobs: StagedJob[] = [];
    let rows: OutboxRow[] = [];
    const emitted: (PublicEvent & { accountId: number })[] = [];
    const result = await this.transactions.run(async (manager) => {
      const tx: Tx = {
        manager,
        enqueue: (job, payload, options = {}) => {
          jobs.push(stagedJob(job, payload, { ...options, traceparent: options.traceparent ?? currentTraceparent() }));
        },
        emit: (event) => tx.emitMany([event]),
        emitMany: async (events) => {
          if (!events.length) return;
          const columns: unknown[][] = [[], [], [], [], [], []];
          for (const e of events) {
            // The event's delivery continues the trace that emitted it, also when the sweep re-enqueues it.
            const traceparent = e.traceparent ?? currentTraceparent() ?? null;
            [e.accountId, e.type, e.resourceType, String(e.resourceId), JSON.stringify(e.data), traceparent].forEach(
              (v, i) => columns[i].push(v),
            );
          }
          const rows = await preparedQuery<DomainEventEntity>(manager, EMIT_SQL, columns);
          for (const row of rows) {
            emitted.push({ ...toPublicEvent(row), accountId: row.accountId });
            if (row.fannedOut) continue;
            jobs.push(
              stagedJob(
                FanOutEventJob,
                { accountId: row.accountId, eventId: row.id },
                { traceparent: row.traceparent },
              ),
            );
          }
        },
      };
      const value = await work(tx);
      if (jobs.length) {
        rows = await withSpan('outbox write', 'internal', { 'messaging.batch.message_count': jobs.length }, () =>
          this.staging.stage(manager, jobs),
        );
      }
      return value;
    });
    // Not awaited: a request does not wait on the streams; the events are committed, and a stream resumes from them.
    if (emitted.length) void this.live.publish(emitted);
    await this.dispatcher.dispatch(rows);
    return result;
  }

  /** A statement and its jobs (no reads, no events) as a single statement: one round trip, for the hottest writes. */
  async runStatement(statement: string, params: unknown[], jobs: StagedJob[]): Promise<void> {
    const rows = await withSpan('outbox write', 'internal', { 'messaging.batch.message_count': jobs.length }, () =>
      this.staging.stageWith(statement, params, jobs),
    );
    await this.dispatcher.dispatch(rows);
  }
}
