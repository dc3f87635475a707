import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { FeedOrder, preparedQuery, ReadReplicas, Sql } from '@app/database';
import { isAdminEventType } from './domain-event-types';
import { DomainEvent, eventQueries } from './events.queries';
import { PublicEvent, toPublicEvent } from './views';

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
    // A feed polled with a cursor: an event a replica has not replayed yet comes with the next poll.
    return this.read(this.replicas.forStaleRead(), eventQueries.list(accountId, q));
  }

  /** From the primary: a stream going live after this read must find every earlier committed event in it. */
  async backlog(accountId: number, after: number, filter: EventFilter, limit: number): Promise<PublicEvent[]> {
    return this.read(this.primary, eventQueries.backlog(accountId, after, filter, limit));
  }

  /** The account's newest event id, from the primary: where a stream started without `after` stands. */
  async latestId(accountId: number): Promise<number | undefined> {
    const [row] = await preparedQuery<{ id: number }>(this.primary, eventQueries.latestId(accountId));
    return row?.id;
  }

  private async read(source: DataSource, query: Sql): Promise<PublicEvent[]> {
    return (await preparedQuery<DomainEvent>(source, query)).map(toPublicEvent);
  }
}

/** The same rule as the backlog's query, for live events. */
export function passes(filter: EventFilter, type: string, adminOnly: boolean): boolean {
  return (
    (!filter.types.length || filter.types.includes(type)) &&
    (filter.adminEvents || (!adminOnly && !isAdminEventType(type)))
  );
}
