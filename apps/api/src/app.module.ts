import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE, DiscoveryModule } from '@nestjs/core';
import { AppConfig, Clock, ConfigModule } from '@app/config';
import { FEATURE_WORKERS, featureModules } from '@app/features';
import { DatabaseModule } from '@app/database';
import { AllExceptionsFilter, ApiValidationPipe } from '@app/errors';
import { JobsModule } from '@app/jobs';
import { TracingFlushService } from '@app/observability';
import { RedisModule } from '@app/redis';
import { AccountController } from './account/account.controller';
import { CategoriesController } from './categories/categories.controller';
import { EventsController } from './events/events.controller';
import { StreamKeyWatch } from './events/stream-key-watch';
import { ProxyTrustWatch } from './gate/proxy-trust-watch';
import { RequestGate } from './gate/request-gate.hook';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { KeysController } from './keys/keys.controller';
import { MessagesController } from './messages/messages.controller';
import { PetsController } from './pets/pets.controller';
import { RateLimitController } from './rate-limit/rate-limit.controller';
import { RootController } from './root/root.controller';
import { InventoryController } from './store/inventory.controller';
import { OrdersController } from './store/orders.controller';
import { UsageController } from './usage/usage.controller';
import { WebhooksController } from './webhooks/webhooks.controller';
import { MetricsServerService } from './metrics/metrics-server.service';
import { RouteRegistry } from './policy/route-registry';

/** In this order in the OpenAPI document (and its generated clients). */
export const API_CONTROLLERS = [
  AccountController,
  KeysController,
  RateLimitController,
  UsageController,
  EventsController,
  WebhooksController,
  CategoriesController,
  PetsController,
  InventoryController,
  OrdersController,
  MessagesController,
  RootController,
];

@Module({
  imports: [
    ConfigModule,
    // configureApp reads the handlers' @PublicGet.
    DiscoveryModule,
    DatabaseModule.forRoot('api'),
    RedisModule,
    JobsModule.register('producer', FEATURE_WORKERS),
    ...featureModules('api'),
    HealthModule,
    IdempotencyModule,
  ],
  controllers: API_CONTROLLERS,
  providers: [
    RouteRegistry,
    RequestGate,
    { provide: ProxyTrustWatch, inject: [AppConfig, Clock], useFactory: ProxyTrustWatch.of },
    { provide: APP_PIPE, useClass: ApiValidationPipe },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    TracingFlushService,
    MetricsServerService,
    StreamKeyWatch,
  ],
})
export class AppModule {}
