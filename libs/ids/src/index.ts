export * from './pooled-random';
export * from './request-id';
