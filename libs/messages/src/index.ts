export * from './message.entity';
export * from './views';
export * from './message.jobs';
export * from './messages.service';
export * from './message-processing.service';
export * from './messages.module';
