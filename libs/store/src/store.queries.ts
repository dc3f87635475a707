import { PET_COLUMNS, PET_ROW } from '@app/catalog';
import { accountPage, columns, joinSql, raw, sql } from '@app/database';
import { DUE_COLUMNS, DuePage } from '@app/jobs';
import { InventoryListFilter, OrderListFilter } from './inputs';
import { OrderEntity } from './order.entity';

/** Columns of an OrderRow, for an orders table aliased `o`. */
export const ORDER_COLUMNS = `o.id, o.pet_id AS "petId", o.quantity, o.ship_date AS "shipDate", o.complete`;
export type OrderRow = Pick<OrderEntity, 'id' | 'petId' | 'quantity' | 'shipDate' | 'complete'>;
const ORDER_ROW = columns<OrderRow>({ id: true, petId: true, quantity: true, shipDate: true, complete: true });
export type NewOrderRow = Pick<OrderEntity, 'petId' | 'quantity' | 'shipDate' | 'traceparent'>;

const orderColumns = raw(ORDER_COLUMNS);

export const orderQueries = {
  list: (accountId: number, q: OrderListFilter) => {
    const page = accountPage('o', accountId, q.after ?? 0);
    const where = [page.where];
    if (q.complete !== undefined) where.push(sql`o.complete = ${q.complete}`);
    if (q.petId) where.push(sql`o.pet_id = ${q.petId}`);
    return sql`SELECT ${orderColumns} FROM orders o WHERE ${joinSql(where, ' AND ')} ${page.orderBy} LIMIT ${q.limit + 1}`.returns(
      ORDER_ROW,
    );
  },
  get: (accountId: number, id: number) =>
    sql`SELECT ${orderColumns} FROM orders o WHERE o.account_id = ${accountId} AND o.id = ${id}`.returns(ORDER_ROW),
  insert: (accountId: number, o: NewOrderRow) =>
    sql`INSERT INTO orders AS o (account_id, pet_id, quantity, ship_date, traceparent) VALUES (${accountId}, ${o.petId}, ${o.quantity}, ${o.shipDate}, ${o.traceparent})
         RETURNING ${orderColumns}`.returns(ORDER_ROW),
  /** Returns nothing for a complete order, which can no longer be cancelled. */
  deleteOpen: (accountId: number, id: number) =>
    sql`DELETE FROM orders o WHERE o.account_id = ${accountId} AND o.id = ${id} AND NOT o.complete RETURNING ${orderColumns}`.returns(
      ORDER_ROW,
    ),
  openPetId: (accountId: number, id: number) =>
    sql`SELECT pet_id AS "petId" FROM orders WHERE account_id = ${accountId} AND id = ${id} AND NOT complete`.returns<{
      petId: number;
    }>({ petId: true }),
  /** Conditional, so it fulfils once however often it runs; the ship date defaults to `now`. */
  complete: (accountId: number, id: number, now: Date) =>
    sql`UPDATE orders o SET complete = true, ship_date = coalesce(o.ship_date, ${now}), updated_at = now()
         WHERE o.account_id = ${accountId} AND o.id = ${id} AND NOT o.complete RETURNING ${orderColumns}`.returns(
      ORDER_ROW,
    ),
  /** The lost-job sweep's statement (SweepSource.due). */
  sweepDue: ({ olderThanMs, limit, after }: DuePage) =>
    sql`SELECT id, account_id AS "accountId", traceparent, coalesce(ship_date, created_at)::text AS "dueAt"
       FROM orders
       WHERE NOT complete
         AND coalesce(ship_date, created_at) < now() - make_interval(secs => ${olderThanMs}::double precision / 1000)
         AND (coalesce(ship_date, created_at), id) > (coalesce(${after?.dueAt ?? null}::timestamptz, '-infinity'), coalesce(${after?.id ?? null}::bigint, 0))
       ORDER BY coalesce(ship_date, created_at), id LIMIT ${limit}
       FOR UPDATE SKIP LOCKED`.returns(DUE_COLUMNS),
};

/** The store's side of the pets table: its stock column. */
export const inventoryQueries = {
  list: (accountId: number, q: InventoryListFilter) => {
    const page = accountPage('p', accountId, q.after ?? 0);
    const byStatus = q.status ? sql`AND p.status = ${q.status}` : raw('');
    return sql`SELECT ${raw(PET_COLUMNS)} FROM pets p WHERE ${page.where} ${byStatus} ${page.orderBy} LIMIT ${q.limit + 1}`.returns(
      PET_ROW,
    );
  },
  set: (accountId: number, petId: number, stock: number) =>
    sql`UPDATE pets SET stock = ${stock}, updated_at = now() WHERE account_id = ${accountId} AND id = ${petId}`,
  take: (accountId: number, petId: number, quantity: number) =>
    sql`UPDATE pets SET stock = stock - ${quantity}, updated_at = now() WHERE account_id = ${accountId} AND id = ${petId}`,
  giveBack: (accountId: number, petId: number, quantity: number) =>
    sql`UPDATE pets SET stock = stock + ${quantity}, updated_at = now() WHERE account_id = ${accountId} AND id = ${petId}`,
};
