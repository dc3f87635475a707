import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery, queryPlannedPerCall } from '@app/database';
import { ApiError, assertIfMatch } from '@app/errors';
import { UnitOfWork } from '@app/transactions';
import { AccountSlots } from './account-slots';
import { NewPet, PetListFilter, PetUpdate } from './inputs';
import { categoryQueries, petQueries, PetRow } from './catalog.queries';
import { lockPet, readPet, syncPetStatus } from './pet-status';
import { PetView, toPetView } from './views';

/** Stock that a chosen status implies: `sold` empties it, `available` ensures one unit. */
export function stockForStatus(status: 'available' | 'sold' | undefined, stock: number): number {
  if (status === 'sold') return 0;
  if (status === 'available') return Math.max(stock, 1);
  return stock;
}

/** The shortest `name` a search takes: a trigram index serves substrings of three characters or more. */
export const NAME_SEARCH_MIN_LENGTH = 3;

@Injectable()
export class PetsService {
  /** A tenant's name searches take turns and a share of the clock (a rare substring's search reads the index, a common one's the page). */
  private readonly searchSlots: AccountSlots;

  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
    config: AppConfig,
  ) {
    this.searchSlots = new AccountSlots(config.nameSearchSlots);
  }

  /**
   * One index range scan per filter set: every predicate leads with account_id, pages by id.
   * A name search is planned with its pattern on every call (an unnamed statement): a rare
   * substring reads the account's matches from the trigram index `pets_account_name_trgm`, a
   * common one walks the account's pets in id order until the page is full. Either way the page
   * holds the next matches, so only a full page links to another.
   */
  async list(accountId: number, q: PetListFilter): Promise<PetView[]> {
    const statement = petQueries.list(accountId, q);
    if (!q.name) return (await preparedQuery<PetRow>(this.dataSource, statement)).map(toPetView);
    const rows = await this.searchSlots.run(accountId, () => queryPlannedPerCall<PetRow>(this.dataSource, statement));
    return rows.map(toPetView);
  }

  async get(accountId: number, id: number): Promise<PetView> {
    return toPetView(await readPet(this.dataSource, accountId, id));
  }

  async create(accountId: number, dto: NewPet): Promise<PetView> {
    return this.uow.run(async (tx) => {
      await this.assertCategory(tx.manager, accountId, dto.categoryId);
      const sold = dto.status === 'sold';
      const [row] = await preparedQuery<PetRow>(
        tx.manager,
        petQueries.insert(accountId, {
          categoryId: dto.categoryId,
          name: dto.name,
          status: sold ? 'sold' : 'available',
          stock: sold ? 0 : 1,
        }),
      );
      const view = toPetView(row);
      await tx.emit({ accountId, type: 'pet.created', resourceType: 'pet', resourceId: row.id, data: view });
      return view;
    });
  }

  async update(accountId: number, id: number, dto: PetUpdate, ifMatch?: string): Promise<PetView> {
    return this.uow.run(async (tx) => {
      const current = await lockPet(tx.manager, accountId, id);
      if (!current) throw ApiError.notFound('Pet');
      assertIfMatch(ifMatch, toPetView(current));
      if (dto.categoryId !== undefined && dto.categoryId !== current.categoryId) {
        await this.assertCategory(tx.manager, accountId, dto.categoryId);
      }
      const stock = stockForStatus(dto.status, current.stock);
      await preparedQuery(
        tx.manager,
        petQueries.update(accountId, id, {
          name: dto.name ?? current.name,
          categoryId: dto.categoryId ?? current.categoryId,
          stock,
        }),
      );
      if (stock !== current.stock) {
        await tx.emit({
          accountId,
          type: 'inventory.updated',
          resourceType: 'inventory',
          resourceId: id,
          data: { petId: id, quantity: stock, previousQuantity: current.stock },
        });
      }
      const view = toPetView(await syncPetStatus(tx, accountId, id));
      await tx.emit({ accountId, type: 'pet.updated', resourceType: 'pet', resourceId: id, data: view });
      return view;
    });
  }

  async remove(accountId: number, id: number, ifMatch?: string): Promise<void> {
    await this.uow.run(async (tx) => {
      // Orders are placed under this same row lock, so none can appear after the check.
      const current = await lockPet(tx.manager, accountId, id);
      if (!current) throw ApiError.notFound('Pet');
      assertIfMatch(ifMatch, toPetView(current));
      const [open] = await preparedQuery(tx.manager, petQueries.anyOpenOrder(accountId, id));
      if (open) throw new ApiError('pet_has_open_orders', 'The pet has open orders; cancel or fulfil them first');
      await preparedQuery(tx.manager, petQueries.delete(accountId, id));
      await tx.emit({ accountId, type: 'pet.deleted', resourceType: 'pet', resourceId: id, data: toPetView(current) });
    });
  }

  /** The category must be one of the caller's; the key-share lock keeps it from being deleted meanwhile. */
  private async assertCategory(manager: EntityManager, accountId: number, categoryId: number): Promise<void> {
    const [found] = await preparedQuery(manager, categoryQueries.lockKeyShare(accountId, categoryId));
    if (!found) throw ApiError.validation('categoryId', 'must name a category of this account');
  }
}
