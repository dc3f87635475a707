import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainEvent } from '@app/database';
import { PublicEvent, toPublicEvent } from '@app/webhooks';
import { ListEventsQuery } from './events.dto';

/** Reads the account's event log (written only by TransactionService's tx.emit). */
@Injectable()
export class EventsService {
  constructor(private readonly dataSource: DataSource) {}

  /** limit + 1 rows: the extra one tells the controller another page exists. */
  async list(accountId: number, q: ListEventsQuery): Promise<PublicEvent[]> {
    const qb = this.dataSource
      .getRepository(DomainEvent)
      .createQueryBuilder('e')
      .where('e.accountId = :accountId AND e.id > :after', { accountId, after: q.after ?? 0 })
      .orderBy('e.id')
      .limit(q.limit + 1);
    if (q.type) qb.andWhere('e.type = :type', { type: q.type });
    return (await qb.getMany()).map(toPublicEvent);
  }
}
