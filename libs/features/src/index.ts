import { DynamicModule, Type } from '@nestjs/common';
import { AccessModule } from '@app/access';
import { CatalogModule } from '@app/catalog';
import { EVENTS_WORKER, EventsModule } from '@app/events';
import { WorkerFeature } from '@app/jobs';
import { MESSAGES_WORKER, MessagesModule } from '@app/messages';
import { STORE_WORKER, StoreModule } from '@app/store';
import { TransactionsModule } from '@app/transactions';
import { USAGE_WORKER, UsageModule } from '@app/usage';
import { WEBHOOKS_WORKER, WebhooksModule } from '@app/webhooks';

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

/**
 * Each feature's jobs, sweeps and retention sources (its `<feature>.worker.ts`), named once: the worker runs them, a
 * producer enqueues onto their jobs' queues (JobsModule.register). Queues, sweeps and retention go in this order.
 */
export const FEATURE_WORKERS: readonly WorkerFeature[] = [
  MESSAGES_WORKER,
  STORE_WORKER,
  EVENTS_WORKER,
  WEBHOOKS_WORKER,
  USAGE_WORKER,
];
