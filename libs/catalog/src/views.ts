import { CategoryEntity } from './category.entity';
import { PetEntity, PetStatus } from './pet.entity';

/** The interface's Pet model. */
export interface PetView {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

/** Columns of a PetRow, for a pets table aliased `p`. */
export const PET_COLUMNS = `p.id, p.name, p.category_id AS "categoryId", p.status, p.stock`;
/** A pets row as the store reads it: the Pet plus its inventory entry. */
export type PetRow = Pick<PetEntity, 'id' | 'name' | 'categoryId' | 'status' | 'stock'>;

/** Columns of a CategoryRow (unaliased). */
export const CATEGORY_COLUMNS = 'id, name, description';
export type CategoryRow = Pick<CategoryEntity, 'id' | 'name' | 'description'>;

export function toPetView(p: PetRow): PetView {
  return { id: p.id, name: p.name, categoryId: p.categoryId, status: p.status };
}

/** The interface's Category model. */
export interface CategoryView {
  id: number;
  name: string;
  description?: string;
}
