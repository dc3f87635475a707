export * from './plan-limits';
export * from './rate-limit-decision';
export * from './plan-rate-limiter';
