/**
 * The e2e harness (test/support/test-apps.ts) loads the API's and the worker's modules in one
 * process: @nestjs/typeorm then warned "A data source with the default name is already
 * registered" once per test file, since it registers the name when forRootAsync is called.
 */
it("loading both apps' modules in one process registers the data source name once", () => {
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- this registry's Logger, before the modules load
    const { Logger } = require('@nestjs/common') as typeof import('@nestjs/common');
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    /* eslint-disable @typescript-eslint/no-require-imports */
    require('../apps/api/src/app.module');
    require('../apps/worker/src/worker.module');
    /* eslint-enable @typescript-eslint/no-require-imports */
    expect(warn.mock.calls.map(([message]) => String(message)).filter((m) => m.includes('already registered'))).toEqual(
      [],
    );
  });
});
