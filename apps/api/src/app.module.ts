import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from '@app/auth';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { AllExceptionsFilter, ApiValidationPipe } from '@app/errors';
import { OutboxModule } from '@app/outbox';
import { QueuesModule } from '@app/queues';
import { PlanRateLimiter } from '@app/rate-limit';
import { RedisModule } from '@app/redis';
import { AccountController } from './account/account.controller';
import { EventsModule } from './events/events.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { CategoriesModule } from './categories/categories.module';
import { RequestGateMiddleware } from './gate/request-gate.middleware';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { KeysController } from './keys/keys.controller';
import { PetsModule } from './pets/pets.module';
import { MessagesModule } from './messages/messages.module';
import { RateLimitController } from './rate-limit/rate-limit.controller';
import { StoreModule } from './store/store.module';

@Module({
  imports: [
    ConfigModule,
    DatabaseModule,
    RedisModule,
    QueuesModule.register('producer'),
    OutboxModule,
    AuthModule,
    HealthModule,
    EventsModule,
    WebhooksModule,
    CategoriesModule,
    PetsModule,
    StoreModule,
    IdempotencyModule,
    MessagesModule,
  ],
  controllers: [AccountController, KeysController, RateLimitController],
  providers: [
    PlanRateLimiter,
    RequestGateMiddleware,
    { provide: APP_PIPE, useClass: ApiValidationPipe },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class AppModule {}
