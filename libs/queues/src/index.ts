export * from './queue-names';
export * from './queues.module';
export * from './processor-provider';
