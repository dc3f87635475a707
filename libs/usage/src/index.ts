export * from './usage-time';
export * from './usage.jobs';
export * from './usage-history.service';
export * from './usage-aggregation.service';
export * from './usage.module';
