import { Page } from '@app/database';
import { PetStatus } from './pet.entity';

/** What the catalog services take: the API's DTOs validate and satisfy these. */
export interface NewPet {
  name: string;
  categoryId: number;
  status?: Exclude<PetStatus, 'pending'>;
}

export interface PetUpdate {
  name?: string;
  categoryId?: number;
  status?: Exclude<PetStatus, 'pending'>;
}

export interface PetListFilter extends Page {
  status?: PetStatus;
  categoryId?: number;
  name?: string;
  ids?: number[];
}

export interface NewCategory {
  name: string;
  description?: string;
}

export interface CategoryUpdate {
  name?: string;
  /** null clears it. */
  description?: string | null;
}
