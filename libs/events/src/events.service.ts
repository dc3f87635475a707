import { Injectable } from '@nestjs/common';
import { FeedOrder, feedPage, preparedQuery, raw, ReadReplicas, sql } from '@app/database';
import { ADMIN_EVENT_TYPES } from './domain-event-types';
import { DomainEvent, EVENT_COLUMNS, PublicEvent, toPublicEvent } from './views';

export interface EventListQuery {
  limit: number;
  after?: number;
  type?: string;
  order?: FeedOrder;
  /** Include the api_key.* events (ADMIN_EVENT_TYPES): only for a key with the `admin` scope. */
  adminEvents: boolean;
}

@Injectable()
export class EventsService {
  constructor(private readonly replicas: ReadReplicas) {}

  /** limit + 1 rows: the extra one tells the controller another page exists. */
  async list(accountId: number, q: EventListQuery): Promise<PublicEvent[]> {
    const page = feedPage('e', 'account_id', accountId, q.order ?? 'oldest', q.after);
    const byType = q.type ? sql`AND e.type = ${q.type}` : raw('');
    const notAdmin = q.adminEvents ? raw('') : sql`AND e.type <> ALL(${ADMIN_EVENT_TYPES}::text[])`;
    // A feed polled with a cursor: an event a replica has not replayed yet comes with the next poll.
    const rows = await preparedQuery<DomainEvent>(
      this.replicas.forStaleRead(),
      sql`SELECT ${raw(EVENT_COLUMNS)} FROM events e
        WHERE ${page.where} ${byType} ${notAdmin} ${page.orderBy} LIMIT ${q.limit + 1}`,
    );
    return rows.map(toPublicEvent);
  }
}
