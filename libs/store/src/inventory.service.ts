import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { lockPet, PET_COLUMNS, PetRow, readPet, syncPetStatus } from '@app/catalog';
import { ApiError, assertIfMatch } from '@app/errors';
import { DomainUnitOfWork } from '@app/events';
import { InventoryListFilter } from './inputs';
import { InventoryItemView, toInventoryItem } from './views';
import { accountPage, preparedQuery, raw, sql } from '@app/database';

/** Inventory entries: the stock column of each pet, with the status it implies. */
@Injectable()
export class InventoryService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: DomainUnitOfWork,
  ) {}

  async list(accountId: number, q: InventoryListFilter): Promise<InventoryItemView[]> {
    const page = accountPage('p', accountId, q.after ?? 0);
    const byStatus = q.status ? sql`AND p.status = ${q.status}` : raw('');
    const rows: PetRow[] = await preparedQuery(
      this.dataSource,
      sql`SELECT ${raw(PET_COLUMNS)} FROM pets p WHERE ${page.where} ${byStatus} ${page.orderBy} LIMIT ${q.limit + 1}`,
    );
    return rows.map(toInventoryItem);
  }

  async get(accountId: number, petId: number): Promise<InventoryItemView> {
    return toInventoryItem(await readPet(this.dataSource, accountId, petId));
  }

  async set(accountId: number, petId: number, quantity: number, ifMatch?: string): Promise<InventoryItemView> {
    return this.uow.run(async (tx) => {
      const current = await lockPet(tx.manager, accountId, petId);
      if (!current) throw ApiError.notFound('Pet');
      assertIfMatch(ifMatch, toInventoryItem(current));
      await preparedQuery(
        tx.manager,
        `UPDATE pets SET stock = $3, updated_at = now() WHERE account_id = $1 AND id = $2`,
        [accountId, petId, quantity],
      );
      await tx.emit({
        accountId,
        type: 'inventory.updated',
        resourceType: 'inventory',
        resourceId: petId,
        data: { petId, quantity, previousQuantity: current.stock },
      });
      return toInventoryItem(await syncPetStatus(tx, accountId, petId));
    });
  }
}
