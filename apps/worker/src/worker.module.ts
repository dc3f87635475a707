import { Module } from '@nestjs/common';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { ReadinessService } from '@app/observability';
import { OutboxModule } from '@app/outbox';
import { processorProvider, QueueName, QueuesModule } from '@app/queues';
import { RedisModule } from '@app/redis';
import { EventFanOutProcessor } from './events/event-fan-out.processor';
import { EventFanOutService } from './events/event-fan-out.service';
import { MessageProcessingService } from './messages/message-processing.service';
import { MessageProcessor } from './messages/message.processor';
import { OpsServerService } from './ops/ops-server.service';
import { OutboxRelayService } from './outbox/outbox-relay.service';
import { LostJobSweepService } from './sweep/lost-job-sweep.service';
import { WebhookDeliveryProcessor } from './webhooks/webhook-delivery.processor';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service';
import { WebhookSender } from './webhooks/webhook-sender';
import { FulfilmentModule } from './store/fulfilment.module';

/** The worker: BullMQ processors, the outbox relay and the ops server; no API. */
@Module({
  imports: [ConfigModule, DatabaseModule, RedisModule, QueuesModule.register('worker'), OutboxModule, FulfilmentModule],
  providers: [
    ReadinessService,
    OpsServerService,
    OutboxRelayService,
    LostJobSweepService,
    EventFanOutService,
    processorProvider(EventFanOutProcessor, QueueName.Events),
    WebhookSender,
    WebhookDeliveryService,
    processorProvider(WebhookDeliveryProcessor, QueueName.Webhooks),
    MessageProcessingService,
    processorProvider(MessageProcessor, QueueName.Messages),
  ],
})
export class WorkerModule {}
