import { Module } from '@nestjs/common';
import { OutboxModule } from '@app/outbox';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** The webhooks API; delivery itself happens in the worker. */
@Module({
  imports: [OutboxModule],
  controllers: [WebhooksController],
  providers: [WebhooksService],
})
export class WebhooksModule {}
