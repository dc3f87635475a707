import { DynamicModule, Type } from '@nestjs/common';
import { AccessModule } from '@app/access';
import { CatalogModule } from '@app/catalog';
import { EventsModule } from '@app/events';
import { MessagesModule } from '@app/messages';
import { StoreModule } from '@app/store';
import { TransactionsModule } from '@app/transactions';
import { UsageModule } from '@app/usage';
import { WebhooksModule } from '@app/webhooks';

/** The feature libraries the API and the worker both load, in one list so a new feature reaches both. */
export function featureModules(role: 'api' | 'worker'): (Type | DynamicModule)[] {
  return [
    EventsModule,
    TransactionsModule,
    AccessModule,
    CatalogModule,
    StoreModule,
    MessagesModule,
    WebhooksModule,
    UsageModule.register(role),
  ];
}
