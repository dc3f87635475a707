export * from './entities';
export * from './migrations';
export * from './data-source-options';
export * from './ensure-database';
export * from './prepared-query';
export * from './database.module';
