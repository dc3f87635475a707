import { PetStatus } from '@app/database';

/** The interface's Pet model. */
export interface PetView {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

/** A pets row as the store reads it: the Pet plus its inventory entry. */
export interface PetRow extends PetView {
  stock: number;
}

/** Columns of a PetRow, for a pets table aliased `p`. */
export const PET_COLUMNS = `p.id, p.name, p.category_id AS "categoryId", p.status, p.stock`;

export function toPetView(p: PetRow): PetView {
  return { id: p.id, name: p.name, categoryId: p.categoryId, status: p.status };
}

/** The interface's Category model. */
export interface CategoryView {
  id: number;
  name: string;
  description?: string;
}
