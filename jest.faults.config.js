/**
 * The fault suite (`npm run test:faults`): real API and worker processes from dist/, their
 * Postgres and Redis behind TCP proxies that the tests cut and restore. Kept out of
 * jest.config.js so `npm test` and a bare `npx jest` never start it by accident.
 */
const { projects } = require('./jest.config');

const e2e = projects.find((p) => p.displayName === 'e2e');

module.exports = {
  testTimeout: 120_000,
  // Kept until the load files are run without it (start-up and shutdown exit without it): a failed boot ends the run red at once.
  forceExit: true,
  projects: [{ ...e2e, displayName: 'faults', testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'] }],
};
