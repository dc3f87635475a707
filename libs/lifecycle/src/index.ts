export * from './start-up';
export * from './readiness.service';
export * from './shutdown-watchdog';
