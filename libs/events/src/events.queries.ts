import { columns, FeedOrder, feedPage, raw, Sql, sql } from '@app/database';
import { DUE_COLUMNS, DuePage } from '@app/jobs';
import { ADMIN_EVENT_TYPES, NewDomainEvent } from './domain-event-types';
import { DomainEventEntity } from './domain-event.entity';
import type { EventFilter, EventListQuery } from './events.service';

/** For an events table aliased `e`. */
export const EVENT_COLUMNS = `e.id, e.account_id AS "accountId", e.type, e.resource_type AS "resourceType",
  e.resource_id AS "resourceId", e.sequence, e.data, e.created_at AS "createdAt"`;
export type DomainEvent = Omit<DomainEventEntity, 'fannedOut' | 'traceparent' | 'adminOnly'>;
export const EVENT_ROW = columns<DomainEvent>({
  id: true,
  accountId: true,
  type: true,
  resourceType: true,
  resourceId: true,
  sequence: true,
  data: true,
  createdAt: true,
});

function page(
  accountId: number,
  order: FeedOrder,
  after: number | undefined,
  byType: Sql,
  adminEvents: boolean,
  limit: number,
): Sql<DomainEvent> {
  const { where, orderBy } = feedPage('e', 'account_id', accountId, order, after);
  const notAdmin = adminEvents ? raw('') : sql`AND e.type <> ALL(${ADMIN_EVENT_TYPES}::text[]) AND NOT e.admin_only`;
  return sql`SELECT ${raw(EVENT_COLUMNS)} FROM events e
        WHERE ${where} ${byType} ${notAdmin} ${orderBy} LIMIT ${limit}`.returns(EVENT_ROW);
}

export const eventQueries = {
  // The counter upsert row-locks (account, resource): concurrent emitters take 1, 2, ... in turn. An event no
  // active webhook subscribes to is born fanned out, without a fan-out job: most events have no subscriber. The events
  // go as one JSON text: an array parameter per column had pg escape each event's data JSON into an array literal.
  record: (events: (NewDomainEvent & { traceparent: string | null })[]) =>
    sql`WITH input AS (
    SELECT account_id, type, resource_type, resource_id, data, traceparent, coalesce(admin_only, false) AS admin_only, n
      FROM ROWS FROM (json_to_recordset(${JSON.stringify(events)}::json) AS ("accountId" bigint, type text,
        "resourceType" text, "resourceId" text, data jsonb, traceparent text, "adminOnly" boolean))
      WITH ORDINALITY AS i(account_id, type, resource_type, resource_id, data, traceparent, admin_only, n)),
  seq AS (
    INSERT INTO event_sequences AS s (account_id, resource_type, resource_id, last)
    SELECT account_id, resource_type, resource_id, 1 FROM input ORDER BY n
    ON CONFLICT (account_id, resource_type, resource_id) DO UPDATE SET last = s.last + 1
    RETURNING account_id, resource_type, resource_id, last),
  inserted AS (
    INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out, traceparent, admin_only)
    SELECT i.account_id, i.type, i.resource_type, i.resource_id, seq.last, i.data,
           NOT EXISTS (SELECT 1 FROM webhooks w
                        WHERE w.account_id = i.account_id AND w.status = 'active' AND i.type = ANY (w.events)),
           i.traceparent, i.admin_only
      FROM input i JOIN seq USING (account_id, resource_type, resource_id)
     ORDER BY i.n
    RETURNING id, account_id, type, resource_type, resource_id, sequence, data, created_at, fanned_out, traceparent,
              admin_only)
  SELECT id, account_id AS "accountId", type, resource_type AS "resourceType", resource_id AS "resourceId", sequence,
         data, created_at AS "createdAt", fanned_out AS "fannedOut", traceparent, admin_only AS "adminOnly"
    FROM inserted ORDER BY id`.returns<DomainEventEntity>({
      ...EVENT_ROW,
      fannedOut: true,
      traceparent: true,
      adminOnly: true,
    }),
  /** limit + 1 rows: the extra one tells the controller another page exists. */
  list: (accountId: number, q: EventListQuery) => {
    const byType = q.type ? sql`AND e.type = ${q.type}` : raw('');
    return page(accountId, q.order ?? 'oldest', q.after, byType, q.adminEvents, q.limit + 1);
  },
  /** What an event stream replays before it goes live. */
  backlog: (accountId: number, after: number, filter: EventFilter, limit: number) => {
    const byType = filter.types.length ? sql`AND e.type = ANY(${filter.types}::text[])` : raw('');
    return page(accountId, 'oldest', after, byType, filter.adminEvents, limit);
  },
  latestId: (accountId: number) =>
    sql`SELECT e.id FROM events e WHERE e.account_id = ${accountId} ORDER BY e.id DESC LIMIT 1`.returns<{ id: number }>(
      {
        id: true,
      },
    ),
  /** The lost-job sweep's statement (SweepSource.due). */
  sweepDue: ({ olderThanMs, limit, after }: DuePage) =>
    sql`SELECT id, account_id AS "accountId", traceparent, created_at::text AS "dueAt" FROM events
       WHERE NOT fanned_out
         AND created_at < now() - make_interval(secs => ${olderThanMs}::double precision / 1000)
         AND (created_at, id) > (coalesce(${after?.dueAt ?? null}::timestamptz, '-infinity'), coalesce(${after?.id ?? null}::bigint, 0))
       ORDER BY created_at, id LIMIT ${limit}
       FOR UPDATE SKIP LOCKED`.returns(DUE_COLUMNS),
  /** Retention: rows that keep their partition from being dropped (PartitionedHistory.openRows). */
  openRows: () => raw('NOT fanned_out'),
};

/** For the generated .sql file: pages as a key without the admin scope reads them, without the api_key.* events. */
export const eventQueriesSamples: { [K in keyof typeof eventQueries]?: Parameters<(typeof eventQueries)[K]> } = {
  list: [1, { limit: 1, after: 1, type: 'x', order: 'oldest', adminEvents: false }],
  backlog: [1, 1, { types: ['x'], adminEvents: false }, 1],
};
