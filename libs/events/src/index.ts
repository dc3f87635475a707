export * from './domain-event.entity';
export * from './event-sequence.entity';
export * from './domain-event-types';
export * from './event.jobs';
export * from './events.service';
export * from './events.module';
export * from './transaction.service';
export * from './views';
