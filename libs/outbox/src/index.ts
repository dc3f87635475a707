export * from './domain-event-types';
export * from './outbox.service';
export * from './transaction.service';
export * from './outbox.module';
