import { PetRow } from './catalog.queries';
import { PetStatus } from './pet.entity';

/** The interface's Pet model. */
export interface PetView {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

export function toPetView(p: PetRow): PetView {
  return { id: p.id, name: p.name, categoryId: p.categoryId, status: p.status };
}

/** The interface's Category model. */
export interface CategoryView {
  id: number;
  name: string;
  description?: string;
}
