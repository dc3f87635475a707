import { Injectable } from '@nestjs/common';
import { lockPet, syncPetStatus } from '@app/catalog';
import { Clock } from '@app/config';
import { UnitOfWork } from '@app/transactions';
import { JobPayload, OnJob } from '@app/jobs';
import { FulfilOrderJob } from './store.jobs';
import { orderQueries, OrderRow } from './store.queries';
import { toOrderView } from './views';
import { preparedQuery } from '@app/database';

@Injectable()
export class FulfilmentService {
  constructor(
    private readonly uow: UnitOfWork,
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
      const [open] = await preparedQuery<{ petId: number }>(tx.manager, orderQueries.openPetId(accountId, orderId));
      if (!open) return false;
      // Pet first, then order: the lock order of placing and cancelling.
      await lockPet(tx.manager, accountId, open.petId);
      const [row] = await preparedQuery<OrderRow>(
        tx.manager,
        orderQueries.complete(accountId, orderId, this.clock.now()),
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
