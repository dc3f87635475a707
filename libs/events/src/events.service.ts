import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { FeedOrder, feedPage, preparedQuery, raw, ReadReplicas, Sql, sql } from '@app/database';
import { ADMIN_EVENT_TYPES, isAdminEventType } from './domain-event-types';
import { DomainEvent, EVENT_COLUMNS, PublicEvent, toPublicEvent } from './views';

export interface EventListQuery {
  limit: number;
  after?: number;
  type?: string;
  order?: FeedOrder;
  /** Include the api_key.* events (ADMIN_EVENT_TYPES): only for a key with the `admin` scope. */
  adminEvents: boolean;
}

/** What an event stream passes: its types (all when empty), and the api_key.* events for an admin key only. */
export interface EventFilter {
  types: readonly string[];
  adminEvents: boolean;
}

@Injectable()
export class EventsService {
  constructor(
    private readonly replicas: ReadReplicas,
    private readonly primary: DataSource,
  ) {}

  /** limit + 1 rows: the extra one tells the controller another page exists. */
  async list(accountId: number, q: EventListQuery): Promise<PublicEvent[]> {
    const byType = q.type ? sql`AND e.type = ${q.type}` : raw('');
    // A feed polled with a cursor: an event a replica has not replayed yet comes with the next poll.
    return this.page(
      this.replicas.forStaleRead(),
      accountId,
      q.order ?? 'oldest',
      q.after,
      byType,
      q.adminEvents,
      q.limit + 1,
    );
  }

  /** From the primary: a stream going live after this read must find every earlier committed event in it. */
  async backlog(accountId: number, after: number, filter: EventFilter, limit: number): Promise<PublicEvent[]> {
    const byType = filter.types.length ? sql`AND e.type = ANY(${filter.types}::text[])` : raw('');
    return this.page(this.primary, accountId, 'oldest', after, byType, filter.adminEvents, limit);
  }

  /** The account's newest event id, from the primary: where a stream started without `after` stands. */
  async latestId(accountId: number): Promise<number | undefined> {
    const [row] = await preparedQuery<{ id: number }>(
      this.primary,
      sql`SELECT e.id FROM events e WHERE e.account_id = ${accountId} ORDER BY e.id DESC LIMIT 1`,
    );
    return row?.id;
  }

  private async page(
    source: DataSource,
    accountId: number,
    order: FeedOrder,
    after: number | undefined,
    byType: Sql,
    adminEvents: boolean,
    limit: number,
  ): Promise<PublicEvent[]> {
    const page = feedPage('e', 'account_id', accountId, order, after);
    const notAdmin = adminEvents ? raw('') : sql`AND e.type <> ALL(${ADMIN_EVENT_TYPES}::text[])`;
    const rows = await preparedQuery<DomainEvent>(
      source,
      sql`SELECT ${raw(EVENT_COLUMNS)} FROM events e
        WHERE ${page.where} ${byType} ${notAdmin} ${page.orderBy} LIMIT ${limit}`,
    );
    return rows.map(toPublicEvent);
  }
}

/** The same rule as the backlog's query, for live events. */
export function passes(filter: EventFilter, type: string): boolean {
  return (!filter.types.length || filter.types.includes(type)) && (filter.adminEvents || !isAdminEventType(type));
}
