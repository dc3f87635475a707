import { accountPage, columns, FOUND, joinSql, raw, sql } from '@app/database';
import { CategoryEntity } from './category.entity';
import { PetListFilter } from './inputs';
import { PetEntity, PetStatus } from './pet.entity';

/** Columns of a PetRow, for a pets table aliased `p`. */
export const PET_COLUMNS = `p.id, p.name, p.category_id AS "categoryId", p.status, p.stock`;
/** A pets row as the store reads it: the Pet plus its inventory entry. */
export type PetRow = Pick<PetEntity, 'id' | 'name' | 'categoryId' | 'status' | 'stock'>;
export const PET_ROW = columns<PetRow>({ id: true, name: true, categoryId: true, status: true, stock: true });
export type NewPetRow = Pick<PetEntity, 'categoryId' | 'name' | 'status' | 'stock'>;

/** Columns of a CategoryRow (unaliased). */
export const CATEGORY_COLUMNS = 'id, name, description';
export type CategoryRow = Pick<CategoryEntity, 'id' | 'name' | 'description'>;
const CATEGORY_ROW = columns<CategoryRow>({ id: true, name: true, description: true });

/** LIKE treats `%`, `_` and `\` specially; a name filter means them literally. */
export function likeSubstring(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`;
}

/** The status rule (DESIGN.md section 8), in SQL over a pets row aliased `p`. */
const STATUS_RULE = raw(`CASE
  WHEN p.stock > 0 THEN 'available'
  WHEN EXISTS (SELECT 1 FROM orders o WHERE o.account_id = p.account_id AND o.pet_id = p.id AND NOT o.complete)
    THEN 'pending'
  ELSE 'sold' END`);

const petColumns = raw(PET_COLUMNS);

export const petQueries = {
  /**
   * Every predicate leads with account_id and pages by id. A name search bounds the account with `=` instead,
   * which the trigram index's account_id column serves (`<=` would read every lower account's matches there); the
   * row comparison keeps the primary key out, as in every list (docs/internals/decisions/0006-keyset-pages-by-account.md).
   */
  list: (accountId: number, q: PetListFilter) => {
    const page = accountPage('p', accountId, q.after ?? 0);
    const account = sql`(p.account_id, p.id) > (${accountId}, ${q.after ?? 0}) AND p.account_id = ${accountId}`;
    const where = [q.name ? account : page.where];
    if (q.status) where.push(sql`p.status = ${q.status}`);
    if (q.categoryId) where.push(sql`p.category_id = ${q.categoryId}`);
    if (q.ids) where.push(sql`p.id = ANY(${q.ids}::bigint[])`);
    if (q.name) where.push(sql`lower(p.name) LIKE ${likeSubstring(q.name)}`);
    return sql`SELECT ${petColumns} FROM pets p WHERE ${joinSql(where, ' AND ')} ${page.orderBy}
      LIMIT ${q.limit + 1}`.returns(PET_ROW);
  },
  get: (accountId: number, id: number) =>
    sql`SELECT ${petColumns} FROM pets p WHERE p.account_id = ${accountId} AND p.id = ${id}`.returns(PET_ROW),
  /** Every write that touches a pet's stock, orders or status takes this row lock first. */
  lock: (accountId: number, id: number) =>
    sql`SELECT ${petColumns} FROM pets p WHERE p.account_id = ${accountId} AND p.id = ${id} FOR UPDATE`.returns(
      PET_ROW,
    ),
  /** The row with the status the rule derives for it now. */
  derivedStatus: (accountId: number, id: number) =>
    sql`SELECT ${petColumns}, ${STATUS_RULE} AS derived FROM pets p WHERE p.account_id = ${accountId} AND p.id = ${id}`.returns<
      PetRow & { derived: PetStatus }
    >({ ...PET_ROW, derived: true }),
  setStatus: (accountId: number, id: number, status: PetStatus) =>
    sql`UPDATE pets SET status = ${status}, updated_at = now() WHERE account_id = ${accountId} AND id = ${id}`,
  insert: (accountId: number, p: NewPetRow) =>
    sql`INSERT INTO pets AS p (account_id, category_id, name, status, stock) VALUES (${accountId}, ${p.categoryId}, ${p.name}, ${p.status}, ${p.stock})
         RETURNING ${petColumns}`.returns(PET_ROW),
  update: (accountId: number, id: number, p: Pick<PetRow, 'name' | 'categoryId' | 'stock'>) =>
    sql`UPDATE pets SET name = ${p.name}, category_id = ${p.categoryId}, stock = ${p.stock}, updated_at = now() WHERE account_id = ${accountId} AND id = ${id}`,
  delete: (accountId: number, id: number) => sql`DELETE FROM pets WHERE account_id = ${accountId} AND id = ${id}`,
  anyInCategory: (accountId: number, categoryId: number) =>
    sql`SELECT 1 AS found FROM pets WHERE account_id = ${accountId} AND category_id = ${categoryId} LIMIT 1`.returns(
      FOUND,
    ),
  anyOpenOrder: (accountId: number, id: number) =>
    sql`SELECT 1 AS found FROM orders WHERE account_id = ${accountId} AND pet_id = ${id} AND NOT complete LIMIT 1`.returns(
      FOUND,
    ),
};

const categoryColumns = raw(CATEGORY_COLUMNS);
const findCategory = (lock: string) => (accountId: number, id: number) =>
  sql`SELECT ${categoryColumns} FROM categories WHERE account_id = ${accountId} AND id = ${id} ${raw(lock)}`.returns(
    CATEGORY_ROW,
  );

export const categoryQueries = {
  list: (accountId: number, after: number, limit: number) =>
    sql`SELECT ${categoryColumns} FROM categories WHERE account_id = ${accountId} AND id > ${after} ORDER BY id LIMIT ${limit}`.returns(
      CATEGORY_ROW,
    ),
  get: findCategory(''),
  lockForNoKeyUpdate: findCategory('FOR NO KEY UPDATE'),
  /** Conflicts with the key-share lock a pet insert takes on its category. */
  lockForUpdate: findCategory('FOR UPDATE'),
  /** Keeps the category from being deleted until the transaction ends. */
  lockKeyShare: (accountId: number, id: number) =>
    sql`SELECT 1 AS found FROM categories WHERE account_id = ${accountId} AND id = ${id} FOR KEY SHARE`.returns(FOUND),
  insert: (accountId: number, c: Pick<CategoryRow, 'name' | 'description'>) =>
    sql`INSERT INTO categories (account_id, name, description) VALUES (${accountId}, ${c.name}, ${c.description}) RETURNING ${categoryColumns}`.returns(
      CATEGORY_ROW,
    ),
  update: (accountId: number, id: number, c: Pick<CategoryRow, 'name' | 'description'>) =>
    sql`UPDATE categories SET name = ${c.name}, description = ${c.description}, updated_at = now()
           WHERE account_id = ${accountId} AND id = ${id} RETURNING ${categoryColumns}`.returns(CATEGORY_ROW),
  delete: (accountId: number, id: number) => sql`DELETE FROM categories WHERE account_id = ${accountId} AND id = ${id}`,
};
