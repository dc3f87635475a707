import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { accountPage, joinSql, preparedQuery, raw, sql } from '@app/database';
import { ApiError, assertIfMatch } from '@app/errors';
import { TransactionService } from '@app/events';
import { AccountSlots } from './account-slots';
import { NewPet, PetListFilter, PetUpdate } from './inputs';
import { lockPet, readPet, syncPetStatus } from './pet-status';
import { PET_COLUMNS, PetRow, PetView, toPetView } from './views';

/** LIKE treats `%`, `_` and `\` specially; a name filter means them literally. */
export function likeSubstring(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`;
}

/** Stock that a chosen status implies: `sold` empties it, `available` ensures one unit. */
export function stockForStatus(status: 'available' | 'sold' | undefined, stock: number): number {
  if (status === 'sold') return 0;
  if (status === 'available') return Math.max(stock, 1);
  return stock;
}

/** Pets a name search reads per page at most (a few ms): see PetsService.list. */
export const NAME_SEARCH_WINDOW = 10_000;

@Injectable()
export class PetsService {
  /** A tenant's parallel name searches take turns (each reads up to NAME_SEARCH_WINDOW rows). */
  private readonly searchSlots: AccountSlots;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionService,
    config: AppConfig,
  ) {
    this.searchSlots = new AccountSlots(config.nameSearchAccountConcurrency);
  }

  /**
   * One index range scan per filter set: every predicate leads with account_id, pages by id.
   * A name search reads at most NAME_SEARCH_WINDOW of the account's pets (in id order) per page:
   * no index serves a 1- or 2-character substring, and a rare one would otherwise walk all of a
   * large catalogue on every call. A window that ends before the page is full gives its last id
   * as `resumeAfter`, the next page's cursor (the page may then hold fewer pets, even none).
   */
  async list(accountId: number, q: PetListFilter): Promise<{ pets: PetView[]; resumeAfter?: number }> {
    const page = accountPage('p', accountId, q.after ?? 0);
    const where = [page.where];
    if (q.status) where.push(sql`p.status = ${q.status}`);
    if (q.categoryId) where.push(sql`p.category_id = ${q.categoryId}`);
    if (q.ids) where.push(sql`p.id = ANY(${q.ids}::bigint[])`);
    const filtered = sql`SELECT ${raw(PET_COLUMNS)} FROM pets p WHERE ${joinSql(where, ' AND ')} ${page.orderBy}`;
    if (!q.name) {
      const rows = await preparedQuery<PetRow>(this.dataSource, sql`${filtered} LIMIT ${q.limit + 1}`);
      return { pets: rows.map(toPetView) };
    }
    const search = sql`WITH w AS (${filtered} LIMIT ${NAME_SEARCH_WINDOW}),
            edge AS (SELECT count(*)::int AS scanned, max(id) AS "scannedTo" FROM w)
       SELECT edge.scanned, edge."scannedTo", hit.* FROM edge LEFT JOIN LATERAL (
         SELECT * FROM w WHERE lower(w.name) LIKE ${likeSubstring(q.name)} ORDER BY w.id LIMIT ${q.limit + 1}
       ) hit ON true`;
    const rows = await this.searchSlots.run(accountId, () =>
      preparedQuery<PetRow & { scanned: number; scannedTo: number }>(this.dataSource, search),
    );
    const pets = rows.filter((r) => r.id !== null).map(toPetView);
    const [{ scanned, scannedTo }] = rows;
    return { pets, resumeAfter: pets.length <= q.limit && scanned === NAME_SEARCH_WINDOW ? scannedTo : undefined };
  }

  async get(accountId: number, id: number): Promise<PetView> {
    return toPetView(await readPet(this.dataSource, accountId, id));
  }

  async create(accountId: number, dto: NewPet): Promise<PetView> {
    return this.transactions.run(async (tx) => {
      await this.assertCategory(tx.manager, accountId, dto.categoryId);
      const sold = dto.status === 'sold';
      const [row]: PetRow[] = await preparedQuery(
        tx.manager,
        `INSERT INTO pets AS p (account_id, category_id, name, status, stock) VALUES ($1, $2, $3, $4, $5)
         RETURNING ${PET_COLUMNS}`,
        [accountId, dto.categoryId, dto.name, sold ? 'sold' : 'available', sold ? 0 : 1],
      );
      const view = toPetView(row);
      await tx.emit({ accountId, type: 'pet.created', resourceType: 'pet', resourceId: row.id, data: view });
      return view;
    });
  }

  async update(accountId: number, id: number, dto: PetUpdate, ifMatch?: string): Promise<PetView> {
    return this.transactions.run(async (tx) => {
      const current = await lockPet(tx.manager, accountId, id);
      if (!current) throw ApiError.notFound('Pet');
      assertIfMatch(ifMatch, toPetView(current));
      if (dto.categoryId !== undefined && dto.categoryId !== current.categoryId) {
        await this.assertCategory(tx.manager, accountId, dto.categoryId);
      }
      const stock = stockForStatus(dto.status, current.stock);
      await preparedQuery(
        tx.manager,
        `UPDATE pets SET name = $3, category_id = $4, stock = $5, updated_at = now() WHERE account_id = $1 AND id = $2`,
        [accountId, id, dto.name ?? current.name, dto.categoryId ?? current.categoryId, stock],
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
    await this.transactions.run(async (tx) => {
      // Orders are placed under this same row lock, so none can appear after the check.
      const current = await lockPet(tx.manager, accountId, id);
      if (!current) throw ApiError.notFound('Pet');
      assertIfMatch(ifMatch, toPetView(current));
      const [open] = await preparedQuery(
        tx.manager,
        `SELECT 1 FROM orders WHERE account_id = $1 AND pet_id = $2 AND NOT complete LIMIT 1`,
        [accountId, id],
      );
      if (open) throw new ApiError('pet_has_open_orders', 'The pet has open orders; cancel or fulfil them first');
      await preparedQuery(tx.manager, `DELETE FROM pets WHERE account_id = $1 AND id = $2`, [accountId, id]);
      await tx.emit({ accountId, type: 'pet.deleted', resourceType: 'pet', resourceId: id, data: toPetView(current) });
    });
  }

  /** The category must be one of the caller's; the key-share lock keeps it from being deleted meanwhile. */
  private async assertCategory(manager: EntityManager, accountId: number, categoryId: number): Promise<void> {
    const [found] = await preparedQuery(
      manager,
      `SELECT 1 FROM categories WHERE account_id = $1 AND id = $2 FOR KEY SHARE`,
      [accountId, categoryId],
    );
    if (!found) throw ApiError.validation('categoryId', 'must name a category of this account');
  }
}
