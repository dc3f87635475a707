// Helpers the specs beside the code share with the e2e suites; no production code imports them (eslint.config.mjs).
export * from './unit-database';
export * from './webhook-receiver';
export * from './raw-head';
