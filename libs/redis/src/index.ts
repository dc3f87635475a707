export * from './redis';
export * from './leased-slots';
export * from './redis-broadcast';
export * from './redis-errors';
export * from './redis-tokens';
export * from './redis.module';
export * from './lua-script';
