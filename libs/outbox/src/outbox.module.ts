import { Module } from '@nestjs/common';
import { OutboxService } from './outbox.service';
import { TransactionService } from './transaction.service';

/** Needs QueuesModule and DatabaseModule in the importing app. */
@Module({
  providers: [OutboxService, TransactionService],
  exports: [OutboxService, TransactionService],
})
export class OutboxModule {}
