import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventFanOutService } from './event-fan-out.service';
import { WebhookEntity } from './webhook.entity';
import { WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookDeliveryAttemptEntity } from './webhook-delivery-attempt.entity';
import { WebhookDeliveryHandler } from './webhook-delivery.handler';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { WebhookFairShare } from './webhook-fair-share';
import { WebhookSender } from './webhook-sender';
import { WebhooksService } from './webhooks.service';

@Module({
  imports: [TypeOrmModule.forFeature([WebhookEntity, WebhookDeliveryEntity, WebhookDeliveryAttemptEntity])],
  providers: [
    WebhooksService,
    EventFanOutService,
    WebhookSender,
    WebhookDeliveryService,
    WebhookFairShare,
    WebhookDeliveryHandler,
  ],
  exports: [WebhooksService, WebhookDeliveryService],
})
export class WebhooksModule {}
