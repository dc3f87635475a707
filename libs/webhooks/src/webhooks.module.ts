import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { QueueModule } from '@app/jobs';
import { EventFanOutService } from './event-fan-out.service';
import { WebhookDeliveriesRetentionSource, WebhookDeliveryAttemptsRetentionSource } from './webhooks.retention';
import { WebhookDeliveriesSweepSource } from './webhooks.sweep';
import { WebhookEntity } from './webhook.entity';
import { WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookDeliveryAttemptEntity } from './webhook-delivery-attempt.entity';
import { WebhookDeliveryHandler } from './webhook-delivery.handler';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { WebhookQueue } from './webhook.jobs';
import { WebhookFairShare } from './webhook-fair-share';
import { WebhookSender } from './webhook-sender';
import { WebhooksService } from './webhooks.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEntity, WebhookDeliveryEntity, WebhookDeliveryAttemptEntity]),
    QueueModule.register(WebhookQueue),
  ],
  providers: [
    WebhooksService,
    EventFanOutService,
    WebhookSender,
    WebhookDeliveryService,
    WebhookFairShare,
    WebhookDeliveryHandler,
    WebhookDeliveriesSweepSource,
    WebhookDeliveriesRetentionSource,
    // After the deliveries' source: the attempts of the deliveries it removed go in the same run.
    WebhookDeliveryAttemptsRetentionSource,
  ],
  exports: [WebhooksService, WebhookDeliveryService],
})
export class WebhooksModule {}
