export * from './unit-of-work.service';
export * from './transactions.module';
