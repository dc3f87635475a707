import { InitialSchema1763700000000 } from './1763700000000-initial-schema';
import { CatalogAndStore1763720000000 } from './1763720000000-catalog-and-store';
import { Messages1763730000000 } from './1763730000000-messages';
import { Webhooks1763740000000 } from './1763740000000-webhooks';
import { EventSequences1763750000000 } from './1763750000000-event-sequences';
import { LostJobSweep1763760000000 } from './1763760000000-lost-job-sweep';
import { Traceparent1763770000000 } from './1763770000000-traceparent';
import { AdminScope1763772200000 } from './1763772200000-admin-scope';
import { SweepByDueTime1763780000000 } from './1763780000000-sweep-by-due-time';
import { Retention1763790000000 } from './1763790000000-retention';
import { DropGlobalNameTrigram1763800000000 } from './1763800000000-drop-global-name-trigram';
import { Usage1763900000000 } from './1763900000000-usage';
import { TaggedApiKeys1764000000000 } from './1764000000000-tagged-api-keys';
import { WebhookLifecycle1764100000000 } from './1764100000000-webhook-lifecycle';
import { WebhookDeliveryAttempts1764200000000 } from './1764200000000-webhook-delivery-attempts';
import { PetNameSearchIndex1764300000000 } from './1764300000000-pet-name-search-index';
import { PartitionedHistory1764400000000 } from './1764400000000-partitioned-history';
import { ExplicitPartitionRanges1764500000000 } from './1764500000000-explicit-partition-ranges';
import { TenantLeadingKeys1764600000000 } from './1764600000000-tenant-leading-keys';
import { WebhookCreatedByAdmin1764700000000 } from './1764700000000-webhook-created-by-admin';
import { PendingEventsByAccount1764800000000 } from './1764800000000-pending-events-by-account';
import { AdminOnlyEvents1764900000000 } from './1764900000000-admin-only-events';
import { MessageBatchJobs1765000000000 } from './1765000000000-message-batch-jobs';

/** Applied in this order; features append their migrations at the end, never edit a landed one. */
export const MIGRATIONS = [
  InitialSchema1763700000000,
  CatalogAndStore1763720000000,
  Messages1763730000000,
  Webhooks1763740000000,
  EventSequences1763750000000,
  LostJobSweep1763760000000,
  Traceparent1763770000000,
  AdminScope1763772200000,
  SweepByDueTime1763780000000,
  Retention1763790000000,
  DropGlobalNameTrigram1763800000000,
  Usage1763900000000,
  TaggedApiKeys1764000000000,
  WebhookLifecycle1764100000000,
  WebhookDeliveryAttempts1764200000000,
  PetNameSearchIndex1764300000000,
  PartitionedHistory1764400000000,
  ExplicitPartitionRanges1764500000000,
  TenantLeadingKeys1764600000000,
  WebhookCreatedByAdmin1764700000000,
  PendingEventsByAccount1764800000000,
  AdminOnlyEvents1764900000000,
  MessageBatchJobs1765000000000,
];
