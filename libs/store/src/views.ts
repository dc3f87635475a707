import { PetRow, PetStatus } from '@app/catalog';
import { OrderRow } from './store.queries';

/** The interface's InventoryItem model. */
export interface InventoryItemView {
  petId: number;
  quantity: number;
  status: PetStatus;
}

export function toInventoryItem(p: PetRow): InventoryItemView {
  return { petId: p.id, quantity: p.stock, status: p.status };
}

/** The interface's Order model; `shipDate` is absent until one is requested or the order ships. */
export interface OrderView {
  id: number;
  petId: number;
  quantity: number;
  shipDate?: string;
  complete: boolean;
}

export function toOrderView(o: OrderRow): OrderView {
  const view: OrderView = { id: o.id, petId: o.petId, quantity: o.quantity, complete: o.complete };
  if (o.shipDate) view.shipDate = new Date(o.shipDate).toISOString();
  return view;
}
