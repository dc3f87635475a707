/**
 * Unit specs sit beside the code; service specs (test/service) run feature modules on the real
 * Postgres and Redis without HTTP or the worker runtime; e2e specs (test/e2e/<feature>,
 * test/security, test/deploy) boot the real apps.
 */
// ts-jest transpiles only (isolatedModules): types are checked once by `tsc --noEmit`.
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }];
const moduleNameMapper = {
  // A relative import written `./x.js` for Node's ESM resolution (the CLI's lazy `import('./runtime.js')`) is `./x.ts` here.
  '^(\\.{1,2}/.*)\\.js$': '$1',
  '^@app/(.*)$': '<rootDir>/libs/$1/src',
  '^@petstore/client$': '<rootDir>/packages/client/src',
};
const common = { rootDir: __dirname, transform: { '^.+\\.ts$': tsJest }, moduleNameMapper, testEnvironment: 'node' };

module.exports = {
  testTimeout: 60_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'service',
      testMatch: ['<rootDir>/test/service/**/*.service-spec.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      setupFiles: ['<rootDir>/test/setup/env.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/file-stores.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      setupFiles: ['<rootDir>/test/setup/env.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/file-stores.ts'],
    },
  ],
};
