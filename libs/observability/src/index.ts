export * from './logger';
export * from './http-metrics';
export * from './readiness.service';
export * from './tracing';
export * from './start-up';
export * from './shutdown-watchdog';
export * from './within';
export * from './pooled-random';
