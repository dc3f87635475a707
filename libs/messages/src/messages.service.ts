import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '@app/config';
import { FeedOrder, feedPage, preparedQuery, raw, sql } from '@app/database';
import { ApiError } from '@app/errors';
import { currentTraceparent } from '@app/observability';
import { DomainUnitOfWork } from '@app/events';
import { GroupCommit } from '@app/database';
import { MESSAGE_COLUMNS } from './message-processing.service';
import { MessageEntity, MessageStatus, newMessageId } from './message.entity';
import { ProcessMessageJob } from './message.jobs';
import { Message, MessageView, toMessageView } from './views';

export interface AcceptedMessage {
  id: string;
  message: string;
  status: 'queued';
  createdAt: string;
}

/** traceparent is taken per message: a batch is written in the context of whichever request flushed it. */
type NewMessageRow = Pick<MessageEntity, 'id' | 'accountId' | 'createdAt' | 'traceparent'> & { text: string };

const INSERT_MESSAGES = `INSERT INTO messages (id, account_id, message, status, attempts, created_at, traceparent)
  SELECT id, account_id, message, 'queued', 0, created_at, traceparent
  FROM unnest($1::text[], $2::bigint[], $3::text[], $4::timestamptz[], $5::text[])
    AS m(id, account_id, message, created_at, traceparent)`;

/** SQLSTATE classes one row can cause alone: data exceptions (22) and constraint violations (23). */
const isRowError = (err: unknown) => /^2[23]/.test(String((err as { code?: unknown }).code ?? ''));

@Injectable()
export class MessagesService {
  /** The hottest write: concurrent accepts share one statement, one commit and one outbox enqueue. */
  private readonly accepts = new GroupCommit<NewMessageRow>((rows) => this.insert(rows), {
    maxInFlight: 4,
    maxBatch: 500,
    isItemError: isRowError,
  });

  constructor(
    private readonly uow: DomainUnitOfWork,
    private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  async create(accountId: number, text: string): Promise<AcceptedMessage> {
    const createdAt = this.clock.now();
    const id = newMessageId(createdAt.getTime());
    await this.accepts.submit({ id, accountId, text, createdAt, traceparent: currentTraceparent() ?? null });
    return { id, message: text, status: 'queued', createdAt: createdAt.toISOString() };
  }

  /** Plain SQL: TypeORM's builder cost more CPU than the request. A write-only unit: one statement, one round trip. */
  private insert(rows: NewMessageRow[]): Promise<void> {
    return this.uow.run(async (tx) => {
      tx.write(INSERT_MESSAGES, [
        rows.map((r) => r.id),
        rows.map((r) => r.accountId),
        rows.map((r) => r.text),
        rows.map((r) => r.createdAt),
        rows.map((r) => r.traceparent),
      ]);
      for (const r of rows)
        tx.enqueue(ProcessMessageJob, { accountId: r.accountId, messageId: r.id }, { traceparent: r.traceparent });
    });
  }

  async get(accountId: number, id: string): Promise<MessageView> {
    const [message] = await preparedQuery<Message>(
      this.dataSource,
      `SELECT ${MESSAGE_COLUMNS('m')} FROM messages m WHERE m.id = $1 AND m.account_id = $2`,
      [id, accountId],
    );
    if (!message) throw ApiError.notFound('Message');
    return toMessageView(message);
  }

  /** limit + 1 rows: the extra one tells the controller another page exists. */
  async list(
    accountId: number,
    q: { limit: number; after?: string; status?: MessageStatus; order?: FeedOrder },
  ): Promise<MessageView[]> {
    const page = feedPage('m', 'account_id', accountId, q.order ?? 'oldest', q.after);
    const byStatus = q.status ? sql`AND m.status = ${q.status}` : raw('');
    const rows = await preparedQuery<Message>(
      this.dataSource,
      sql`SELECT ${raw(MESSAGE_COLUMNS('m'))} FROM messages m
        WHERE ${page.where} ${byStatus} ${page.orderBy} LIMIT ${q.limit + 1}`,
    );
    return rows.map(toMessageView);
  }
}
