import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { lockPet, PetRow, readPet, syncPetStatus } from '@app/catalog';
import { ApiError, assertIfMatch } from '@app/errors';
import { UnitOfWork } from '@app/transactions';
import { InventoryListFilter } from './inputs';
import { InventoryItemView, toInventoryItem } from './views';
import { preparedQuery } from '@app/database';
import { inventoryQueries } from './store.queries';

/** Inventory entries: the stock column of each pet, with the status it implies. */
@Injectable()
export class InventoryService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
  ) {}

  async list(accountId: number, q: InventoryListFilter): Promise<InventoryItemView[]> {
    const rows = await preparedQuery<PetRow>(this.dataSource, inventoryQueries.list(accountId, q));
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
      await preparedQuery(tx.manager, inventoryQueries.set(accountId, petId, quantity));
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
