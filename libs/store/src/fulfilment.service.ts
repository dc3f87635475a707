import { Injectable } from '@nestjs/common';
import { lockPet, syncPetStatus } from '@app/catalog';
import { Clock } from '@app/config';
import { DomainUnitOfWork } from '@app/events';
import { JobPayload, OnJob } from '@app/jobs';
import { FulfilOrderJob } from './store.jobs';
import { ORDER_COLUMNS, OrderRow, toOrderView } from './views';
import { preparedQuery } from '@app/database';

@Injectable()
export class FulfilmentService {
  constructor(
    private readonly uow: DomainUnitOfWork,
    private readonly clock: Clock,
  ) {}

  /**
   * Completes an open order: sets the ship date when none was requested and re-derives the
   * pet's status. Idempotent: the conditional UPDATE fulfils once however often it runs;
   * a cancelled (deleted), complete or unknown order is left alone. True if this call fulfilled it.
   */
  @OnJob(FulfilOrderJob)
  async fulfil({ accountId, orderId }: JobPayload<typeof FulfilOrderJob>): Promise<boolean> {
    return this.uow.run(async (tx) => {
      const [open]: { petId: number }[] = await preparedQuery(
        tx.manager,
        `SELECT pet_id AS "petId" FROM orders WHERE account_id = $1 AND id = $2 AND NOT complete`,
        [accountId, orderId],
      );
      if (!open) return false;
      // Pet first, then order: the lock order of placing and cancelling.
      await lockPet(tx.manager, accountId, open.petId);
      const [row] = await preparedQuery<OrderRow>(
        tx.manager,
        `UPDATE orders o SET complete = true, ship_date = coalesce(o.ship_date, $3), updated_at = now()
         WHERE o.account_id = $1 AND o.id = $2 AND NOT o.complete RETURNING ${ORDER_COLUMNS}`,
        [accountId, orderId, this.clock.now()],
      );
      if (!row) return false; // cancelled or fulfilled while we waited for the lock
      await tx.emit({
        accountId,
        type: 'order.completed',
        resourceType: 'order',
        resourceId: orderId,
        data: toOrderView(row),
      });
      await syncPetStatus(tx, accountId, open.petId);
      return true;
    });
  }
}
