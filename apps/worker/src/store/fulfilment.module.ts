import { Module } from '@nestjs/common';
import { OutboxModule } from '@app/outbox';
import { processorProvider, QueueName } from '@app/queues';
import { FulfilmentProcessor } from './fulfilment.processor';
import { FulfilmentService } from './fulfilment.service';

/** Order fulfilment: the BullMQ processor and the service it calls. */
@Module({
  imports: [OutboxModule],
  providers: [FulfilmentService, processorProvider(FulfilmentProcessor, QueueName.Fulfilment)],
  exports: [FulfilmentService],
})
export class FulfilmentModule {}
