import { Global, Module } from '@nestjs/common';
import { EventsService } from './events.service';
import { EventsRetentionSource } from './events.retention';
import { EventsSweepSource } from './events.sweep';
import { TransactionService } from './transaction.service';

/**
 * The domain event log and the unit of work that writes it: every feature's writes, jobs and
 * events commit together through TransactionService. Global: every feature uses it.
 */
@Global()
@Module({
  providers: [TransactionService, EventsService, EventsSweepSource, EventsRetentionSource],
  exports: [TransactionService, EventsService],
})
export class EventsModule {}
