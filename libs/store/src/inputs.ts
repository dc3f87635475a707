import { PetStatus } from '@app/catalog';
import { Page } from '@app/database';

/** What the store services take: the API's DTOs validate and satisfy these. */
export interface NewOrder {
  petId: number;
  quantity: number;
  /** An RFC 3339 date-time (parseDateTime); fulfilment waits until then when it is in the future. */
  shipDate?: string;
}

export interface OrderListFilter extends Page {
  complete?: boolean;
  petId?: number;
}

export interface InventoryListFilter extends Page {
  status?: PetStatus;
}
