export * from './logger';
export * from './http-metrics';
export * from './tracing';
