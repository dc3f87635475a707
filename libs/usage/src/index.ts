export * from './usage-minute.entity';
export * from './usage-hour.entity';
export * from './usage-time';
export * from './usage.queries';
export * from './usage.jobs';
export * from './usage-history.service';
export * from './usage-aggregation.service';
export * from './usage.module';
