import { EventEmitter } from 'node:events';
import fs, { fstatSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import pino from 'pino';
import { AppConfig } from '@app/config';
import { accessLog, LOG_FLUSH_MS, PinoNestLogger, rootLogger } from './logger';

/** A pino logger writing JSON lines into an array. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'trace', base: undefined }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}

describe('PinoNestLogger', () => {
  afterEach(() => Logger.overrideLogger(false));

  it("keeps Nest's context, merges object messages, and drops stack traces", () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(new PinoNestLogger(logger));
    const nest = new Logger('Orders');

    nest.warn({ orderId: 7 }, 'fulfilment job not removed');
    nest.log('plain text');
    nest.error('failed', 'Error: boom\n    at secret.ts:1:1');
    nest.error(new Error('thrown'));
    Logger.log('no context');

    const picked = lines.map(({ level, context, msg, orderId }) => ({ level, context, msg, orderId }));
    expect(picked).toEqual([
      { level: 40, context: 'Orders', msg: 'fulfilment job not removed', orderId: 7 },
      { level: 30, context: 'Orders', msg: 'plain text', orderId: undefined },
      { level: 50, context: 'Orders', msg: 'failed', orderId: undefined },
      { level: 50, context: 'Orders', msg: 'thrown', orderId: undefined },
      { level: 30, context: undefined, msg: 'no context', orderId: undefined },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/secret\.ts|logger\.spec/);
  });

  it("writes Nest's line per mapped route and per loaded module at debug, other start-up lines at info", () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(new PinoNestLogger(logger));
    new Logger('RoutesResolver').log('PetsController {/v1/pets}:');
    new Logger('RouterExplorer').log('Mapped {/v1/pets, GET} route');
    new Logger('InstanceLoader').log('ConfigModule dependencies initialized');
    new Logger('NestApplication').log('Nest application successfully started');

    expect(lines.map(({ level, context }) => [context, level])).toEqual([
      ['RoutesResolver', 20],
      ['RouterExplorer', 20],
      ['InstanceLoader', 20],
      ['NestApplication', 30],
    ]);
  });
});

describe('accessLog', () => {
  function exchange(url: string, headers: Record<string, string>, status: number, finished: boolean) {
    const req = Object.assign(new EventEmitter(), { url, method: 'GET', headers }) as unknown as IncomingMessage;
    const sent: Record<string, unknown> = {};
    const res = Object.assign(new EventEmitter(), {
      statusCode: status,
      writableFinished: finished,
      setHeader: (name: string, value: unknown) => (sent[name] = value),
      hasHeader: (name: string) => Object.keys(sent).some((k) => k.toLowerCase() === name.toLowerCase()),
    }) as unknown as ServerResponse;
    return { req, res, sent };
  }

  function run(url: string, headers: Record<string, string>, status = 200, finished = true) {
    const { logger, lines } = capture();
    const { req, res, sent } = exchange(url, headers, status, finished);
    let nextCalled = false;
    accessLog(logger)(req, res, () => (nextCalled = true));
    res.emit('close');
    return { lines, sent, nextCalled };
  }

  it('logs one line per request with its id, and neither the query string nor a key in the path', () => {
    const { lines, sent, nextCalled } = run('/v1/keys/pst_abcdef0123456789?token=hidden', { 'x-request-id': 'r-1' });
    expect(nextCalled).toBe(true);
    expect(sent['X-Request-Id']).toBe('r-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: 'r-1', method: 'GET', path: '/v1/keys/pst_[redacted]', status: 200 });
    expect(JSON.stringify(lines)).not.toContain('hidden');
  });

  it('logs 5xx answers as errors and marks requests the client abandoned', () => {
    const failed = run('/v1/pets', {}, 500).lines;
    expect(failed[0]).toMatchObject({ level: 50, status: 500 });
    const aborted = run('/v1/pets', {}, 200, false).lines;
    expect(aborted[0]).toMatchObject({ level: 30, aborted: true });
  });

  it('logs a 503 that says when to retry as info: shed load, not a failure', () => {
    const { logger, lines } = capture();
    const { req, res } = exchange('/v1/pets', {}, 503, true);
    accessLog(logger)(req, res, () => res.setHeader('Retry-After', '1'));
    res.emit('close');
    expect(lines[0]).toMatchObject({ level: 30, status: 503 });
  });

  it('gives probes a request id but no log line', () => {
    const { lines, sent } = run('/health/ready', {});
    expect(lines).toEqual([]);
    expect(sent['X-Request-Id']).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
  });
});

describe('rootLogger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-logger-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // The flush interval on a fake clock: what these check does not depend on how busy the machine is.
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'Date'] }));
  afterEach(() => jest.useRealTimers());

  const fileLogger = (app: string, logFormat: AppConfig['logFormat'] = 'json') => {
    const logFile = join(dir, `${app}.log`);
    return { logger: rootLogger({ logLevel: 'info', logFormat, logFile } as AppConfig, app), logFile };
  };
  const linesIn = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

  it('holds lines under 4 KB until the flush interval, then writes them at once', async () => {
    const { logger, logFile } = fileLogger('batched');
    const write = jest.spyOn(fs, 'write');
    // Loggers of other files in this Jest worker write too: only the writes to this one's file count.
    const file = statSync(logFile).ino;
    const writesHere = () => write.mock.calls.filter(([fd]) => typeof fd === 'number' && inode(fd) === file).length;
    try {
      for (let i = 0; i < 30; i++) logger.info({ i }, 'request completed');
      expect(writesHere()).toBe(0);
      jest.advanceTimersByTime(LOG_FLUSH_MS);
      await until(() => linesIn(logFile).length === 30);
      expect(writesHere()).toBe(1);
    } finally {
      write.mockRestore();
    }
  });

  it('LOG_FORMAT=pretty: one readable line an entry, its fields as key=value, no JSON', async () => {
    const { logger, logFile } = fileLogger('pretty', 'pretty');
    logger.child({ context: 'HttpServer' }).info({ signal: 'SIGTERM', inFlight: 0 }, 'shutting down');
    logger.warn({ reason: 'two words' }, 'odd');
    jest.advanceTimersByTime(LOG_FLUSH_MS);
    await until(() => linesIn(logFile).length === 2);
    const [first, second] = linesIn(logFile);
    expect(first).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}pretty HttpServer: shutting down signal=SIGTERM inFlight=0$/);
    expect(second).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}pretty odd reason="two words"$/);
  });

  it('writes a lone line at the next flush', async () => {
    const { logger, logFile } = fileLogger('lone');
    logger.info('the only line');
    jest.advanceTimersByTime(LOG_FLUSH_MS);
    await until(() => linesIn(logFile).length === 1);
  });
});

/** The inode behind a descriptor, or undefined once it is closed. */
function inode(fd: number): number | undefined {
  try {
    return fstatSync(fd).ino;
  } catch {
    return undefined;
  }
}

/** Polls `check` between I/O turns for up to 10 s of wall-clock time. */
async function until(check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check();) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
