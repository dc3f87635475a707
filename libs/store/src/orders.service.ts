import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '@app/config';
import { preparedQuery } from '@app/database';
import { ApiError, assertIfMatch, describe, parseDateTime } from '@app/errors';
import { currentTraceparent } from '@app/observability';
import { lockPet, syncPetStatus } from '@app/catalog';
import { UnitOfWork } from '@app/transactions';
import { JobQueues } from '@app/jobs';
import { NewOrder, OrderListFilter } from './inputs';
import { FulfilOrderJob } from './store.jobs';
import { inventoryQueries, orderQueries, OrderRow } from './store.queries';
import { OrderView, toOrderView } from './views';

@Injectable()
export class OrdersService {
  private readonly logger = new Logger(OrdersService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
    private readonly queues: JobQueues,
    private readonly clock: Clock,
  ) {}

  async list(accountId: number, q: OrderListFilter): Promise<OrderView[]> {
    const rows = await preparedQuery<OrderRow>(this.dataSource, orderQueries.list(accountId, q));
    return rows.map(toOrderView);
  }

  async get(accountId: number, id: number): Promise<OrderView> {
    return toOrderView(await this.find(this.dataSource, accountId, id));
  }

  /**
   * Takes the stock under the pet's row lock (concurrent orders for one pet queue on it, so
   * none can oversell), records the order and stages its fulfilment job in the same
   * transaction; the job is delayed until the ship date when that is in the future.
   */
  async place(accountId: number, dto: NewOrder): Promise<OrderView> {
    // parseDateTime, not new Date(): years 0000-0099 and a leap second as the DTO validated them.
    const shipDate = dto.shipDate === undefined ? null : (parseDateTime(dto.shipDate) ?? null);
    return this.uow.run(async (tx) => {
      const pet = await lockPet(tx.manager, accountId, dto.petId);
      if (!pet) throw ApiError.notFound('Pet');
      if (pet.stock < dto.quantity) {
        throw new ApiError('insufficient_stock', `Only ${pet.stock} unit(s) of this pet are in stock`);
      }
      await preparedQuery(tx.manager, inventoryQueries.take(accountId, pet.id, dto.quantity));
      const [row] = await preparedQuery<OrderRow>(
        tx.manager,
        orderQueries.insert(accountId, {
          petId: pet.id,
          quantity: dto.quantity,
          shipDate,
          traceparent: currentTraceparent() ?? null,
        }),
      );
      const order = toOrderView(row);
      await tx.emit({ accountId, type: 'order.placed', resourceType: 'order', resourceId: order.id, data: order });
      await syncPetStatus(tx, accountId, pet.id);
      const runAt = shipDate && shipDate > this.clock.now() ? shipDate : null;
      tx.enqueue(FulfilOrderJob, { accountId, orderId: order.id }, { runAt });
      return order;
    });
  }

  /** Cancels an open order: its units go back to stock and the order is deleted. */
  async cancel(accountId: number, id: number, ifMatch?: string): Promise<void> {
    await this.uow.run(async (tx) => {
      const order = await this.find(tx.manager, accountId, id);
      assertIfMatch(ifMatch, toOrderView(order));
      if (order.complete) throw notCancellable();
      // Same lock order as placing and fulfilling (pet, then order): no deadlock.
      await lockPet(tx.manager, accountId, order.petId);
      const [deleted] = await preparedQuery<OrderRow>(tx.manager, orderQueries.deleteOpen(accountId, id));
      if (!deleted) throw notCancellable(); // fulfilled while we waited for the lock
      await preparedQuery(tx.manager, inventoryQueries.giveBack(accountId, order.petId, order.quantity));
      await tx.emit({
        accountId,
        type: 'order.cancelled',
        resourceType: 'order',
        resourceId: id,
        data: toOrderView(deleted),
      });
      await syncPetStatus(tx, accountId, order.petId);
    });
    await this.dropFulfilmentJob(accountId, id);
  }

  /**
   * Best effort after commit: the processor skips a cancelled order anyway, so a job that
   * cannot be removed now (Redis away, or still in the outbox) is harmless.
   */
  private async dropFulfilmentJob(accountId: number, orderId: number): Promise<void> {
    try {
      await this.queues.discard(FulfilOrderJob, { accountId, orderId });
    } catch (err) {
      this.logger.warn({ err: describe(err), orderId }, 'could not remove the fulfilment job of a cancelled order');
    }
  }

  private async find(manager: DataSource | EntityManager, accountId: number, id: number): Promise<OrderRow> {
    const [row] = await preparedQuery<OrderRow>(manager, orderQueries.get(accountId, id));
    if (!row) throw ApiError.notFound('Order');
    return row;
  }
}

const notCancellable = () =>
  new ApiError('order_not_cancellable', 'The order is complete and can no longer be cancelled');
