import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '@app/config';
import { Message, MessageStatus, MessageView, newMessageId, toMessageView } from '@app/database';
import { ApiError } from '@app/errors';
import { TransactionService } from '@app/outbox';
import { JobName, jobIds } from '@app/queues';
import { GroupCommit } from '../common/group-commit';

export interface AcceptedMessage {
  id: string;
  message: string;
  status: 'queued';
  createdAt: string;
}

/** A message to accept: the row that becomes the 202's body. */
interface NewMessageRow {
  id: string;
  accountId: number;
  text: string;
  createdAt: Date;
}

const INSERT_MESSAGES = `INSERT INTO messages (id, account_id, message, status, attempts, created_at)
  SELECT id, account_id, message, 'queued', 0, created_at
  FROM unnest($1::text[], $2::bigint[], $3::text[], $4::timestamptz[]) AS m(id, account_id, message, created_at)`;

/** Postgres SQLSTATE classes one row can cause alone: data exceptions (22) and constraint violations (23). */
const isRowError = (err: unknown) => /^2[23]/.test(String((err as { code?: unknown }).code ?? ''));

/** Accepts messages durably (row + outbox entry committed before the 202) and reads them back. */
@Injectable()
export class MessagesService {
  /**
   * The hottest write. Concurrent accepts share one statement and one commit: at 50 clients
   * that is one WAL flush and one outbox enqueue (addBulk) per ~10 messages instead of one per
   * message. A batch is written by up to 4 connections at once (docs/benchmarks.md).
   */
  private readonly accepts = new GroupCommit<NewMessageRow>((rows) => this.insert(rows), {
    maxInFlight: 4,
    maxBatch: 500,
    isItemError: isRowError,
  });

  constructor(
    private readonly tx: TransactionService,
    private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  async create(accountId: number, text: string): Promise<AcceptedMessage> {
    const createdAt = this.clock.now();
    const id = newMessageId(createdAt.getTime());
    await this.accepts.submit({ id, accountId, text, createdAt });
    return { id, message: text, status: 'queued', createdAt: createdAt.toISOString() };
  }

  /** The rows and their jobs' outbox rows in one statement (plain SQL: TypeORM's builder cost more CPU than the request). */
  private insert(rows: NewMessageRow[]): Promise<void> {
    return this.tx.runStatement(
      INSERT_MESSAGES,
      [rows.map((r) => r.id), rows.map((r) => r.accountId), rows.map((r) => r.text), rows.map((r) => r.createdAt)],
      rows.map((r) => ({
        name: JobName.ProcessMessage,
        payload: { accountId: r.accountId, messageId: r.id },
        jobId: jobIds.message(r.id),
      })),
    );
  }

  async get(accountId: number, id: string): Promise<MessageView> {
    const message = await this.dataSource.getRepository(Message).findOneBy({ id, accountId });
    if (!message) throw ApiError.notFound('Message');
    return toMessageView(message);
  }

  /** limit + 1 rows: the extra one tells the controller another page exists. */
  async list(accountId: number, q: { limit: number; after?: string; status?: MessageStatus }): Promise<MessageView[]> {
    const query = this.dataSource
      .getRepository(Message)
      .createQueryBuilder('m')
      .where('m.accountId = :accountId', { accountId })
      .orderBy('m.id')
      .limit(q.limit + 1);
    if (q.after) query.andWhere('m.id > :after', { after: q.after });
    if (q.status) query.andWhere('m.status = :status', { status: q.status });
    return (await query.getMany()).map(toMessageView);
  }
}
