export * from './logger';
export * from './http-metrics';
export * from './readiness.service';
