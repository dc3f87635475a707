import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '@app/config';
import { Message, MessageStatus, MessageView, newMessageId, toMessageView } from '@app/database';
import { ApiError } from '@app/errors';
import { TransactionService } from '@app/outbox';
import { JobName, jobIds } from '@app/queues';

export interface AcceptedMessage {
  id: string;
  message: string;
  status: 'queued';
  createdAt: string;
}

/** Accepts messages durably (row + outbox entry in one transaction) and reads them back. */
@Injectable()
export class MessagesService {
  constructor(
    private readonly tx: TransactionService,
    private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  async create(accountId: number, text: string): Promise<AcceptedMessage> {
    const createdAt = this.clock.now();
    const id = newMessageId(createdAt.getTime());
    // The hottest write: the row and its job's outbox row commit as one statement, one round
    // trip, before the 202 (plain SQL: TypeORM's insert builder cost more CPU than the request).
    await this.tx.runStatement(
      `INSERT INTO messages (id, account_id, message, status, attempts, created_at) VALUES ($1, $2, $3, 'queued', 0, $4)`,
      [id, accountId, text, createdAt],
      [{ name: JobName.ProcessMessage, payload: { accountId, messageId: id }, jobId: jobIds.message(id) }],
    );
    return { id, message: text, status: 'queued', createdAt: createdAt.toISOString() };
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
