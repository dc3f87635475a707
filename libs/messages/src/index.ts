export * from './message.entity';
export * from './views';
export { MESSAGE_COLUMNS } from './messages.queries';
export type { Message } from './messages.queries';
export * from './message.jobs';
export * from './messages.worker';
export * from './messages.service';
export * from './message-processing.service';
export * from './messages.module';
