import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError, assertIfMatch } from '@app/errors';
import { isUniqueViolation, Page, preparedQuery } from '@app/database';
import { DomainUnitOfWork, Tx } from '@app/events';
import { CategoryUpdate, NewCategory } from './inputs';
import { CATEGORY_COLUMNS, CategoryRow, CategoryView } from './views';

function toView(row: CategoryRow): CategoryView {
  return row.description === null ? { id: row.id, name: row.name } : { ...row, description: row.description };
}

/** The unique index on (account_id, lower(name)) is the arbiter of duplicate names, race-free. */
const duplicateName = (err: unknown) => isUniqueViolation(err, 'categories_account_name');

const CATEGORY_EXISTS = () => new ApiError('category_exists', 'A category with this name already exists');

@Injectable()
export class CategoriesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: DomainUnitOfWork,
  ) {}

  async list(accountId: number, q: Page): Promise<CategoryView[]> {
    const rows: CategoryRow[] = await preparedQuery(
      this.dataSource,
      `SELECT ${CATEGORY_COLUMNS} FROM categories WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [accountId, q.after ?? 0, q.limit + 1],
    );
    return rows.map(toView);
  }

  async get(accountId: number, id: number): Promise<CategoryView> {
    return toView(await this.find(this.dataSource.manager, accountId, id));
  }

  async create(accountId: number, dto: NewCategory): Promise<CategoryView> {
    return this.uow.run(async (tx) => {
      const [row] = await preparedQuery<CategoryRow>(
        tx.manager,
        `INSERT INTO categories (account_id, name, description) VALUES ($1, $2, $3) RETURNING ${CATEGORY_COLUMNS}`,
        [accountId, dto.name, dto.description ?? null],
      ).catch((err: unknown) => {
        throw duplicateName(err) ? CATEGORY_EXISTS() : err;
      });
      return this.recorded(tx, accountId, 'category.created', toView(row));
    });
  }

  async update(accountId: number, id: number, dto: CategoryUpdate, ifMatch?: string): Promise<CategoryView> {
    return this.uow.run(async (tx) => {
      const current = await this.find(tx.manager, accountId, id, 'FOR NO KEY UPDATE');
      assertIfMatch(ifMatch, toView(current));
      const [row] = await preparedQuery<CategoryRow>(
        tx.manager,
        `UPDATE categories SET name = $3, description = $4, updated_at = now()
           WHERE account_id = $1 AND id = $2 RETURNING ${CATEGORY_COLUMNS}`,
        [
          accountId,
          id,
          dto.name ?? current.name,
          dto.description === undefined ? current.description : dto.description,
        ],
      ).catch((err: unknown) => {
        throw duplicateName(err) ? CATEGORY_EXISTS() : err;
      });
      return this.recorded(tx, accountId, 'category.updated', toView(row));
    });
  }

  async remove(accountId: number, id: number, ifMatch?: string): Promise<void> {
    await this.uow.run(async (tx) => {
      // FOR UPDATE conflicts with the key-share lock a pet insert takes on its category,
      // so no pet can join the category between this check and the delete.
      const current = await this.find(tx.manager, accountId, id, 'FOR UPDATE');
      assertIfMatch(ifMatch, toView(current));
      const [used] = await preparedQuery(
        tx.manager,
        `SELECT 1 FROM pets WHERE account_id = $1 AND category_id = $2 LIMIT 1`,
        [accountId, id],
      );
      if (used) throw new ApiError('category_in_use', 'Pets belong to this category; move or delete them first');
      await preparedQuery(tx.manager, `DELETE FROM categories WHERE account_id = $1 AND id = $2`, [accountId, id]);
      await this.recorded(tx, accountId, 'category.deleted', toView(current));
    });
  }

  private async find(
    manager: EntityManager,
    accountId: number,
    id: number,
    lock: '' | 'FOR NO KEY UPDATE' | 'FOR UPDATE' = '',
  ): Promise<CategoryRow> {
    const [row]: CategoryRow[] = await preparedQuery(
      manager,
      `SELECT ${CATEGORY_COLUMNS} FROM categories WHERE account_id = $1 AND id = $2 ${lock}`,
      [accountId, id],
    );
    if (!row) throw ApiError.notFound('Category');
    return row;
  }

  private async recorded(
    tx: Tx,
    accountId: number,
    type: 'category.created' | 'category.updated' | 'category.deleted',
    view: CategoryView,
  ): Promise<CategoryView> {
    await tx.emit({ accountId, type, resourceType: 'category', resourceId: view.id, data: view });
    return view;
  }
}
