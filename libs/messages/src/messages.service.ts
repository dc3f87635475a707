import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '@app/config';
import { preparedQuery } from '@app/database';
import { ApiError } from '@app/errors';
import { currentTraceparent } from '@app/observability';
import { UnitOfWork } from '@app/transactions';
import { GroupCommit } from '@app/database';
import { newMessageId } from './message.entity';
import { messageBatch, ProcessMessagesJob } from './message.jobs';
import { Message, MessageListFilter, messageQueries, NewMessageRow } from './messages.queries';
import { MessageView, toMessageView } from './views';

export interface AcceptedMessage {
  id: string;
  message: string;
  status: 'queued';
  createdAt: string;
}

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
    private readonly uow: UnitOfWork,
    private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  async create(accountId: number, text: string): Promise<AcceptedMessage> {
    const now = this.clock.now();
    const [id, createdAt] = [newMessageId(now.getTime()), now.toISOString()];
    await this.accepts.submit({ id, accountId, text, createdAt, traceparent: currentTraceparent() ?? null });
    return { id, message: text, status: 'queued', createdAt };
  }

  /**
   * Plain SQL: TypeORM's builder cost more CPU than the request. A write-only unit: one statement, one round trip,
   * and one job for the batch, which runs in the first message's trace (each message's event continues its own).
   */
  private insert(rows: NewMessageRow[]): Promise<void> {
    const job = messageBatch(rows[0].id, rows);
    return this.uow.run(async (tx) => {
      tx.write(messageQueries.insertBatch(rows));
      tx.enqueue(ProcessMessagesJob, job, { traceparent: rows[0].traceparent });
    });
  }

  async get(accountId: number, id: string): Promise<MessageView> {
    const [message] = await preparedQuery<Message>(this.dataSource, messageQueries.get(accountId, id));
    if (!message) throw ApiError.notFound('Message');
    return toMessageView(message);
  }

  /** limit + 1 rows: the extra one tells the controller another page exists. */
  async list(accountId: number, q: MessageListFilter): Promise<MessageView[]> {
    const rows = await preparedQuery<Message>(this.dataSource, messageQueries.list(accountId, q));
    return rows.map(toMessageView);
  }
}
