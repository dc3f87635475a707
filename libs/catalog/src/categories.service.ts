import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError, assertIfMatch } from '@app/errors';
import { isUniqueViolation, Page, preparedQuery } from '@app/database';
import { UnitOfWork, Tx } from '@app/transactions';
import { CategoryUpdate, NewCategory } from './inputs';
import { categoryQueries, CategoryRow, petQueries } from './catalog.queries';
import { CategoryView } from './views';

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
    private readonly uow: UnitOfWork,
  ) {}

  async list(accountId: number, q: Page): Promise<CategoryView[]> {
    const rows = await preparedQuery<CategoryRow>(
      this.dataSource,
      categoryQueries.list(accountId, q.after ?? 0, q.limit + 1),
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
        categoryQueries.insert(accountId, { name: dto.name, description: dto.description ?? null }),
      ).catch((err: unknown) => {
        throw duplicateName(err) ? CATEGORY_EXISTS() : err;
      });
      return this.recorded(tx, accountId, 'category.created', toView(row));
    });
  }

  async update(accountId: number, id: number, dto: CategoryUpdate, ifMatch?: string): Promise<CategoryView> {
    return this.uow.run(async (tx) => {
      const current = await this.find(tx.manager, accountId, id, categoryQueries.lockForNoKeyUpdate);
      assertIfMatch(ifMatch, toView(current));
      const [row] = await preparedQuery<CategoryRow>(
        tx.manager,
        categoryQueries.update(accountId, id, {
          name: dto.name ?? current.name,
          description: dto.description === undefined ? current.description : dto.description,
        }),
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
      const current = await this.find(tx.manager, accountId, id, categoryQueries.lockForUpdate);
      assertIfMatch(ifMatch, toView(current));
      const [used] = await preparedQuery(tx.manager, petQueries.anyInCategory(accountId, id));
      if (used) throw new ApiError('category_in_use', 'Pets belong to this category; move or delete them first');
      await preparedQuery(tx.manager, categoryQueries.delete(accountId, id));
      await this.recorded(tx, accountId, 'category.deleted', toView(current));
    });
  }

  private async find(
    manager: EntityManager,
    accountId: number,
    id: number,
    query: typeof categoryQueries.get = categoryQueries.get,
  ): Promise<CategoryRow> {
    const [row] = await preparedQuery<CategoryRow>(manager, query(accountId, id));
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
